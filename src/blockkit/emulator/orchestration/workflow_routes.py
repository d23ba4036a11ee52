routes: list = []  # filled by part 2 (workflows over HTTP)
