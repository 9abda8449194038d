#!/usr/bin/env python3
"""An independent reference for the trigram baselines of src/model/experiments/ngram.h, by the
formulas and nothing else (dictionaries, full distributions, fractions where they are exact):
prints p(target) of every scored target of the tiny corpus that tests/test_ngram.cpp checks,
for interpolated absolute discounting and interpolated Kneser-Ney (D = 3/4 at every order,
down to uniform 1/V), and checks that every distribution sums to 1.
    python3 tests/lm/ngram_reference.py
"""
from collections import Counter
from fractions import Fraction as F

D = F(3, 4)
V = 4                       # a b c EOS
a, b, c, EOS = 0, 1, 2, 3
train = [EOS, a, b, EOS, a, b, EOS, a, c]
windows = [[EOS, a, c, EOS], [EOS, a, b, a]]   # targets: the next token; the last has none

c1 = Counter(train)
c2 = Counter(zip(train, train[1:]))
c3 = Counter(zip(train, train[1:], train[2:]))
kn2 = Counter((v, w) for (u, v, w) in c3)       # N1+(., v, w)
kn1 = Counter(w for (v, w) in c2)               # N1+(., w)


def discounted(counts, h, w, lower):
    """max(a(h,w) - D, 0) / a(h.) + D n(h.) / a(h.) p(w | h'); a(h.) = 0 gives p(w | h')."""
    a_h = sum(n for k, n in counts.items() if k[:-1] == h)
    if a_h == 0:
        return lower(w)
    n_h = sum(1 for k, n in counts.items() if k[:-1] == h and n > 0)
    return max(F(counts.get(h + (w,), 0)) - D, F(0)) / a_h + D * n_h / a_h * lower(w)


c1k = {(w,): n for w, n in c1.items()}
kn1k = {(w,): n for w, n in kn1.items()}
uniform = lambda w: F(1, V)
p1_ad = lambda w: discounted(c1k, (), w, uniform)
p1_kn = lambda w: discounted(kn1k, (), w, uniform)
p2_ad = lambda v: lambda w: discounted(c2, (v,), w, p1_ad)
p2_kn_top = lambda v: lambda w: discounted(c2, (v,), w, p1_kn)      # raw counts: the highest order
p2_kn = lambda v: lambda w: discounted(kn2, (v,), w, p1_kn)         # continuation counts
p3_ad = lambda u, v: lambda w: discounted(c3, (u, v), w, p2_ad(v))
p3_kn = lambda u, v: lambda w: discounted(c3, (u, v), w, p2_kn(v))

for dist in [p1_ad, p1_kn] + [f(v) for v in range(V) for f in (p2_ad, p2_kn_top, p2_kn)] + \
        [f(u, v) for u in range(V) for v in range(V) for f in (p3_ad, p3_kn)]:
    assert sum(dist(w) for w in range(V)) == 1

for win in windows:
    for t in range(len(win) - 1):
        v, w = win[t], win[t + 1]
        ad = p2_ad(v)(w) if t == 0 else p3_ad(win[t - 1], v)(w)
        kn = p2_kn_top(v)(w) if t == 0 else p3_kn(win[t - 1], v)(w)
        print(f"{win} t={t}: AD {ad} = {float(ad):.17g}   KN {kn} = {float(kn):.17g}")
