#!/usr/bin/env python3
"""Zip archives for tests/test_zip.cpp (run from the repository root):
  weights.zip   a folder weights-d8/ of torch.nn.Linear weights (W_Q ... W_O, weight and bias,
                d_model 8), deflated, as a file manager zips a folder; plus a __MACOSX/ entry
  slip.zip      one entry named ../escaped.npy ("zip slip")
  link.zip      one entry that is a Unix symbolic link
The damaged, encrypted and oversized cases are made by the test itself, by patching bytes of
weights.zip, so every field it reads has a case."""
import io, stat, zipfile
import numpy as np

out = "tests/golden/zip/"
rng = np.random.default_rng(8)

def npy(a):
    b = io.BytesIO()
    np.save(b, a.astype(np.float32))
    return b.getvalue()

with zipfile.ZipFile(out + "weights.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("weights-d8/", b"")
    for w in ("W_Q", "W_K", "W_V", "W_O"):
        z.writestr(f"weights-d8/{w}.weight.npy", npy(rng.standard_normal((8, 8)) * 0.3))
        z.writestr(f"weights-d8/{w}.bias.npy", npy(rng.standard_normal(8) * 0.1))
    z.writestr("__MACOSX/weights-d8/._W_Q.weight.npy", b"\x00\x05\x16\x07")

with zipfile.ZipFile(out + "slip.zip", "w") as z:
    z.writestr("../escaped.npy", npy(np.zeros((1, 2, 8))))

with zipfile.ZipFile(out + "link.zip", "w") as z:
    info = zipfile.ZipInfo("weights-d8/W_Q.weight.npy")
    info.create_system = 3  # Unix: the high 16 bits of external_attr are st_mode
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    z.writestr(info, "/etc/passwd")
