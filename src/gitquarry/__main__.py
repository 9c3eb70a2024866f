"""``python -m gitquarry`` runs the CLI."""

from gitquarry.cli.entry import main

main()
