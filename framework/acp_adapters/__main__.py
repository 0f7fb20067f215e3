"""``python -m acp_adapters``: the ``acp-adapters`` command line."""

from .cli.entry import main

if __name__ == "__main__":
    main()
