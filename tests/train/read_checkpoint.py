"""Reads a `gpudirect-launch train` checkpoint (launcher/train/checkpoint.hpp) without dependencies:
  8-byte magic GDTRAIN1, uint32 version, uint32 header length, header JSON, then the parameters,
  the AdamW first and second moments (fp32, parameter count each), a uint64 checksum, GDTREND1.
"""
import array
import json
import struct


def read_checkpoint(path):
    """(header dict, parameters, first moment, second moment) as array('f')."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"GDTRAIN1":
        raise ValueError(f"{path}: not a gpudirect-launch train checkpoint")
    version, length = struct.unpack_from("<II", data, 8)
    header = json.loads(data[16:16 + length])
    n = header["parameters"]
    at = 16 + length
    arrays = []
    for _ in range(3):
        a = array.array("f")
        a.frombytes(data[at:at + 4 * n])
        arrays.append(a)
        at += 4 * n
    return header, arrays[0], arrays[1], arrays[2]


def max_abs_difference(a, b):
    if len(a) != len(b):
        raise ValueError(f"different sizes: {len(a)} and {len(b)}")
    return max(abs(x - y) for x, y in zip(a, b))


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 3:
        sys.exit("usage: read_checkpoint.py A.ckpt B.ckpt  (prints the largest parameter difference)")
    _, pa, _, _ = read_checkpoint(sys.argv[1])
    _, pb, _, _ = read_checkpoint(sys.argv[2])
    print(f"{max_abs_difference(pa, pb):.3e}")
