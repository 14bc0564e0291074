def broken(:  # want: TM000
    pass
