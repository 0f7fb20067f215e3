"""``python -m acp_adapters``: the ``acp-adapters`` command line."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="acp-adapters")
