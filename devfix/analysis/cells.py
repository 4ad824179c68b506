"""The comment that opens each cell of a notebook's program (devfix/notebooks.py joins the
cells; the analysis reads the marks). A module of its own, with nothing to import, so that
reading a notebook needs neither the parser nor the flow."""

CELL_MARK = "# [devfix cell "
