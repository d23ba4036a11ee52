"""``python -m blockkit``: the same command line as the ``blockkit`` script."""

from blockkit.cli import main

main(prog_name="blockkit")
