"""``python -m gitquarry`` runs the CLI."""

from gitquarry.cli.app import main

main()
