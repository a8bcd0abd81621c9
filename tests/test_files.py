"""Files written whole or not at all (``skriskrank._files.write_atomically``)."""

import threading
from pathlib import Path

import pytest

from skriskrank._files import write_atomically


def test_a_write_that_fails_leaves_the_old_file_and_nothing_else(tmp_path):
    path = tmp_path / "levels.json"
    path.write_text("reviewed")

    def cut_short(tmp):
        Path(tmp).write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, cut_short)
    assert path.read_text() == "reviewed"
    assert list(tmp_path.iterdir()) == [path]


def test_a_concurrent_reader_finds_one_whole_file_or_the_other(tmp_path):
    path = tmp_path / "shard.bin"
    size = 1 << 20
    path.write_bytes(b"a" * size)
    done = threading.Event()

    def in_pieces(tmp, letter):
        with open(tmp, "wb") as fh:
            for _ in range(16):  # as a slow writer would: the file grows in steps
                fh.write(letter * (size // 16))
                fh.flush()

    def writer():
        for i in range(100):
            write_atomically(path, lambda tmp, i=i: in_pieces(tmp, b"ab"[i % 2:i % 2 + 1]))
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    seen = set()
    while not done.is_set():
        data = path.read_bytes()
        assert len(data) == size and data in (b"a" * size, b"b" * size)
        seen.add(data[:1])
    thread.join()
    assert seen and list(tmp_path.iterdir()) == [path]
