#!/usr/bin/env python3
"""Writes the MovieLens ratings that Debian ships in r-cran-dslabs as a ratings.dat file.

r-cran-dslabs holds MovieLens' ml-latest-small (100,004 ratings of 9,066 movies by 671 users)
as the data frame `movielens` in R's lazy-load database (data/Rdata.rdx, an index, and
data/Rdata.rdb, the objects, each R-serialized and compressed). Debian's python3-rdata reads
R's serialization; this script finds the object through the index, reads it, and writes one
`UserID::MovieID::Rating::Timestamp` line per rating, the format of MovieLens-1M's ratings.dat
that `dlbench run ncf --data` reads.

Usage: movielens-from-dslabs.py OUT [--dslabs DIR]
Exit 0 on success, 1 when the package or the object is missing or unreadable, 2 on bad usage.
"""
import argparse
import gzip
import os
import struct
import sys
import zlib

DEFAULT_DIR = "/usr/lib/R/site-library/dslabs/data"


def fail(message):
    print(f"movielens-from-dslabs: {message}", file=sys.stderr)
    sys.exit(1)


def parse_serialized(rdata, stream):
    """One R-serialized object (XDR, "X\\n" first) as Python values; rdata reads it as the body
    of an .rda file of serialization version 3, which is the same stream behind a header."""
    return rdata.conversion.convert(rdata.parser.parse_data(b"RDX3\n" + stream))


def unpack_entry(blob):
    """An Rdata.rdb entry: a 4-byte big-endian length, then the zlib stream of that length."""
    (length,) = struct.unpack(">I", blob[:4])
    body = zlib.decompress(blob[4:])
    if len(body) != length:
        fail(f"an entry of the database unpacks to {len(body)} bytes, not {length}")
    return body


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="the ratings.dat file to write")
    p.add_argument("--dslabs", default=DEFAULT_DIR, help=f"dslabs' data folder ({DEFAULT_DIR})")
    args = p.parse_args()
    try:
        import rdata
    except ImportError as e:
        fail(f"cannot import rdata ({e}): install Debian's python3-rdata")
    index_path = os.path.join(args.dslabs, "Rdata.rdx")
    data_path = os.path.join(args.dslabs, "Rdata.rdb")
    if not os.path.exists(index_path):
        fail(f"no {index_path}: install Debian's r-cran-dslabs")
    try:
        with open(index_path, "rb") as f:
            index = parse_serialized(rdata, gzip.decompress(f.read()))
        offset, size = (int(v) for v in index["variables"]["movielens"])
        with open(data_path, "rb") as f:
            f.seek(offset)
            frame = parse_serialized(rdata, unpack_entry(f.read(size)))
    except (OSError, KeyError, ValueError, zlib.error, NotImplementedError) as e:
        fail(f"cannot read movielens from {args.dslabs}: {type(e).__name__}: {e}")
    columns = ("userId", "movieId", "rating", "timestamp")
    missing = [c for c in columns if c not in frame]
    if missing:
        fail(f"movielens has no column {', '.join(missing)} (it has {', '.join(frame.columns)})")
    with open(args.out, "w") as out:
        for user, movie, rating, timestamp in zip(*(frame[c] for c in columns)):
            out.write(f"{int(user)}::{int(movie)}::{float(rating):g}::{int(timestamp)}\n")
    print(f"{args.out}: {len(frame)} ratings of {frame['movieId'].nunique()} movies by "
          f"{frame['userId'].nunique()} users")


if __name__ == "__main__":
    main()
