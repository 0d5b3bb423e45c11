"""`python -m karpplan` runs the command line."""

from karpplan.cli.main import main

if __name__ == "__main__":
    main()
