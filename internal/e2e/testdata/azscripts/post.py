# What the examples do with curl: POST the request file to the scoring URI with the key.
import sys
import urllib.request

uri, key, path = sys.argv[1:4]
with open(path, "rb") as f:
    body = f.read()
req = urllib.request.Request(uri, data=body, headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=30) as resp:
    print(resp.read().decode())
