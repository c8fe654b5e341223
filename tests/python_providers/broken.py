import attnprof

def broken(:
    pass
