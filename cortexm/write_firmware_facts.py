"""`make firmware`'s last step: the facts of each firmware ELF (its static alignment checks and
reference graph), computed and written beside it (firmware_facts.py says where and how).

    python -m micro_rt.cortexm.write_firmware_facts cortexm/firmware/*.elf
"""
from __future__ import annotations

import sys

from .image import write_shipped_references
from .static_alignment import write_shipped


def main(paths: list[str]) -> None:
    for name in paths:
        print(f"wrote {write_shipped(name)} and {write_shipped_references(name)}")


if __name__ == "__main__":
    main(sys.argv[1:])
