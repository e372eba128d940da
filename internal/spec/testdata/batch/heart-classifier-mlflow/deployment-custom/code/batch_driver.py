def init():
    pass


def run(mini_batch):
    return mini_batch
