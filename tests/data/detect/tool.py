"""Count the documents on a shelf by extension."""

from collections import Counter
from pathlib import Path


def count(root: Path) -> Counter[str]:
    return Counter(path.suffix.lower() for path in root.rglob("*") if path.is_file())


if __name__ == "__main__":
    print(count(Path(".")).most_common())
