"""KISS FFT (v130, as TFLM's Signal library builds it: FIXED_POINT=16, FIXED_POINT=32 and
float), in numpy.

TFLM's SignalRfft / SignalIrfft run `kiss_fftr` / `kiss_fftri`: a complex FFT of half the
length on the samples taken in pairs, and a split into (or merge from) the real spectrum. In
fixed point every stage divides its inputs by the radix first (C_FIXDIV), every product
rounds (sround: + half, >> 15 or 31) and every sum is stored back into the scalar type; in
float every operation rounds to float32. This file follows those steps in the same order,
vectorised over the independent butterflies, so the result is bit-exact. The FFT is a recursive mixed-radix
decimation in time: radix 4 first, then 2, 3, 5 (kf_factor). KISS FFT's generic butterfly
for larger prime factors needs a temporary buffer, which TFLM's build patches to a null
pointer: TFLM crashes on such lengths, so `unsupported_factor` lets the kernel refuse them.

The state kiss_fftr_alloc lays out (its size is what TFLM allocates persistently):
kiss_fftr_state (3 pointers), kiss_fft_state (nfft, inverse, 64 factors, nfft/2 twiddles),
then nfft/2 scratch and nfft/4 super-twiddle complex values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Union

import numpy as np

from .signal_common import wrap

class FixedPoint:
    """KISS FFT's FIXED_POINT arithmetic (16 or 32 bits): products round (sround), sums are
    stored back into the scalar type, HALF_OF is a shift of the int value. Values are int64."""

    def __init__(self, bits: int):
        self.bits, self.frac = bits, bits - 1
        self.samp_max = (1 << (bits - 1)) - 1
        self.dtype = np.int16 if bits == 16 else np.int32

    def load(self, x) -> np.ndarray:
        return np.asarray(x, np.int64)

    def cexp(self, phase: float) -> tuple:
        return (int(wrap(math.floor(0.5 + self.samp_max * math.cos(phase)), self.bits)),
                int(wrap(math.floor(0.5 + self.samp_max * math.sin(phase)), self.bits)))

    def store(self, x):
        return wrap(x, self.bits)

    def mul(self, a, b):                                   # S_MUL: sround(smul(a, b))
        return wrap((a * b + (1 << (self.frac - 1))) >> self.frac, self.bits)

    def cmul(self, a: tuple, b: tuple) -> tuple:
        r = (a[0] * b[0] - a[1] * b[1] + (1 << (self.frac - 1))) >> self.frac
        i = (a[0] * b[1] + a[1] * b[0] + (1 << (self.frac - 1))) >> self.frac
        return wrap(r, self.bits), wrap(i, self.bits)

    def fixdiv(self, c: tuple, div: int) -> tuple:
        k = self.samp_max // div
        return self.mul(c[0], k), self.mul(c[1], k)

    def half(self, x):
        """HALF_OF of an int expression (computed in C's int, 32 bits, then shifted)."""
        return self.store(wrap(x, 32) >> 1)


class Float32:
    """KISS FFT's float arithmetic: every operation rounded to float32 in the C order;
    C_FIXDIV does nothing, HALF_OF multiplies by 0.5f (TFLM's patch)."""
    dtype = np.float32

    def load(self, x) -> np.ndarray:
        return np.asarray(x, np.float32)

    def cexp(self, phase: float) -> tuple:
        return np.float32(math.cos(phase)), np.float32(math.sin(phase))

    def store(self, x):
        return x

    def mul(self, a, b):
        return a * b

    def cmul(self, a: tuple, b: tuple) -> tuple:
        return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]

    def fixdiv(self, c: tuple, div: int) -> tuple:
        return c

    def half(self, x):
        return x * np.float32(0.5)


Arithmetic = Union[FixedPoint, Float32]     # the scalar type's KISS FFT operations
ARITHMETIC: dict[np.dtype, Callable[[], Arithmetic]] = {
    np.dtype(np.int16): lambda: FixedPoint(16), np.dtype(np.int32): lambda: FixedPoint(32),
    np.dtype(np.float32): Float32}
FFT_STATE_FIXED_BYTES = 264    # kiss_fft_state before its twiddles: 2 ints + 64 factors


def fftr_state_bytes(nfft: int, pointer_size: int, cpx_bytes: int = 4) -> int:
    """kiss_fftr_alloc's memneeded for a real FFT of length nfft (even); cpx_bytes is
    sizeof(kiss_fft_cpx): 4 for int16, 8 for int32 and float."""
    half = nfft // 2
    sub = FFT_STATE_FIXED_BYTES + cpx_bytes * max(half, 1)     # twiddles[1] is in the struct
    return 3 * pointer_size + sub + cpx_bytes * (half * 3 // 2)


def _factor(n: int) -> list[tuple[int, int]]:
    """kf_factor: (radix, remaining length) pairs, powers of 4 first, then 2, then odd."""
    out, p = [], 4
    floor_sqrt = math.floor(math.sqrt(n))
    while True:
        while n % p:
            p = 2 if p == 4 else 3 if p == 2 else p + 2
            if p > floor_sqrt:
                p = n
        n //= p
        out.append((p, n))
        if n <= 1:
            return out


def unsupported_factor(nfft: int) -> int:
    """The first radix of an nfft-point real FFT above 5 (0 if none): TFLM crashes on it."""
    return next((p for p, _ in _factor(nfft // 2) if p > 5), 0)


@dataclass
class KissFftr:
    """A real-FFT plan (kiss_fftr_alloc) for int16, int32 or float32: forward (`__call__`,
    kiss_fftr) or, with inverse=True, inverse (`inverse_real`, kiss_fftri; conjugate twiddles)."""
    nfft: int
    inverse: bool = False
    dtype: type = np.int16

    def __post_init__(self) -> None:
        self.a: Arithmetic = ARITHMETIC[np.dtype(self.dtype)]()
        n = self.nfft // 2
        self.ncfft = n
        self.factors = _factor(n)
        sign = -1.0 if self.inverse else 1.0
        tw = [self.a.cexp(sign * (-2 * math.pi * i / n)) for i in range(n)]
        sup = [self.a.cexp(sign * (-math.pi * ((i + 1) / n + 0.5))) for i in range(n // 2)]
        self.twiddles = tuple(self.a.load([t[j] for t in tw]).reshape(-1) for j in (0, 1))
        self.super_twiddles = tuple(self.a.load([t[j] for t in sup]).reshape(-1) for j in (0, 1))

    def _tw(self, index: np.ndarray) -> tuple:
        return self.twiddles[0][index], self.twiddles[1][index]

    def _add(self, x: tuple, y: tuple) -> tuple:
        return self.a.store(x[0] + y[0]), self.a.store(x[1] + y[1])

    def _sub(self, x: tuple, y: tuple) -> tuple:
        return self.a.store(x[0] - y[0]), self.a.store(x[1] - y[1])

    def _work(self, x: tuple, fstride: int, stage: int) -> tuple:
        """kf_work on a batch: x is (re, im) of shape (B, p*m), each row a decimated input."""
        p, m = self.factors[stage]
        batch = x[0].shape[0]
        if m == 1:
            f = (x[0].reshape(batch, p, 1), x[1].reshape(batch, p, 1))
        else:
            sub = tuple(c.reshape(batch, m, p).transpose(0, 2, 1).reshape(batch * p, m) for c in x)
            out = self._work(sub, fstride * p, stage + 1)
            f = (out[0].reshape(batch, p, m), out[1].reshape(batch, p, m))
        fout = [(f[0][:, q, :].copy(), f[1][:, q, :].copy()) for q in range(p)]
        k = np.arange(m)
        if p == 2:
            fout = self._bfly2(fout, fstride, k)
        elif p == 4:
            fout = self._bfly4(fout, fstride, k)
        elif p == 3:
            fout = self._bfly3(fout, fstride, k, m)
        else:
            fout = self._bfly5(fout, fstride, k, m)
        return (np.stack([c[0] for c in fout], 1).reshape(batch, p * m),
                np.stack([c[1] for c in fout], 1).reshape(batch, p * m))

    def _bfly2(self, f: list, fstride: int, k: np.ndarray) -> list:
        a = self.a
        f0, f1 = a.fixdiv(f[0], 2), a.fixdiv(f[1], 2)
        t = a.cmul(f1, self._tw(k * fstride))
        return [self._add(f0, t), self._sub(f0, t)]

    def _bfly4(self, f: list, fstride: int, k: np.ndarray) -> list:
        a, add, sub = self.a, self._add, self._sub
        f0, f1, f2, f3 = (a.fixdiv(c, 4) for c in f)
        s0 = a.cmul(f1, self._tw(k * fstride))
        s1 = a.cmul(f2, self._tw(k * fstride * 2))
        s2 = a.cmul(f3, self._tw(k * fstride * 3))
        s5 = sub(f0, s1)
        f0 = add(f0, s1)
        s3, s4 = add(s0, s2), sub(s0, s2)
        f2 = sub(f0, s3)
        f0 = add(f0, s3)
        st = a.store
        if self.inverse:
            f1 = (st(s5[0] - s4[1]), st(s5[1] + s4[0]))
            f3 = (st(s5[0] + s4[1]), st(s5[1] - s4[0]))
        else:
            f1 = (st(s5[0] + s4[1]), st(s5[1] - s4[0]))
            f3 = (st(s5[0] - s4[1]), st(s5[1] + s4[0]))
        return [f0, f1, f2, f3]

    def _bfly3(self, f: list, fstride: int, k: np.ndarray, m: int) -> list:
        a, st = self.a, self.a.store
        epi3_i = self.twiddles[1][fstride * m]
        f0, f1, f2 = (a.fixdiv(c, 3) for c in f)
        s1 = a.cmul(f1, self._tw(k * fstride))
        s2 = a.cmul(f2, self._tw(k * fstride * 2))
        s3, s0 = self._add(s1, s2), self._sub(s1, s2)
        f1 = (st(f0[0] - a.half(s3[0])), st(f0[1] - a.half(s3[1])))
        s0 = (a.mul(s0[0], epi3_i), a.mul(s0[1], epi3_i))        # C_MULBYSCALAR
        f0 = self._add(f0, s3)
        f2 = (st(f1[0] + s0[1]), st(f1[1] - s0[0]))
        f1 = (st(f1[0] - s0[1]), st(f1[1] + s0[0]))
        return [f0, f1, f2]

    def _bfly5(self, f: list, fstride: int, k: np.ndarray, m: int) -> list:
        a, st, sm = self.a, self.a.store, self.a.mul
        ya = (self.twiddles[0][fstride * m], self.twiddles[1][fstride * m])
        yb = (self.twiddles[0][fstride * 2 * m], self.twiddles[1][fstride * 2 * m])
        f0, f1, f2, f3, f4 = (a.fixdiv(c, 5) for c in f)
        s1 = a.cmul(f1, self._tw(k * fstride))
        s2 = a.cmul(f2, self._tw(2 * k * fstride))
        s3 = a.cmul(f3, self._tw(3 * k * fstride))
        s4 = a.cmul(f4, self._tw(4 * k * fstride))
        s7, s10 = self._add(s1, s4), self._sub(s1, s4)
        s8, s9 = self._add(s2, s3), self._sub(s2, s3)
        s0 = f0
        out0 = (st(f0[0] + (s7[0] + s8[0])), st(f0[1] + (s7[1] + s8[1])))   # Fout0 += s7 + s8
        s5 = (st(s0[0] + sm(s7[0], ya[0]) + sm(s8[0], yb[0])),
              st(s0[1] + sm(s7[1], ya[0]) + sm(s8[1], yb[0])))
        s6 = (st(sm(s10[1], ya[1]) + sm(s9[1], yb[1])),
              st(-sm(s10[0], ya[1]) - sm(s9[0], yb[1])))
        out1, out4 = self._sub(s5, s6), self._add(s5, s6)
        s11 = (st(s0[0] + sm(s7[0], yb[0]) + sm(s8[0], ya[0])),
               st(s0[1] + sm(s7[1], yb[0]) + sm(s8[1], ya[0])))
        s12 = (st(-sm(s10[1], yb[1]) + sm(s9[1], ya[1])),
               st(sm(s10[0], yb[1]) - sm(s9[0], ya[1])))
        out2, out3 = self._add(s11, s12), self._sub(s11, s12)
        return [out0, out1, out2, out3, out4]

    def __call__(self, frames: np.ndarray) -> np.ndarray:
        """kiss_fftr (a forward plan) over each row of `frames` (B, nfft): (B, nfft/2 + 1, 2)."""
        a = self.a
        x = a.load(frames)
        batch, n = x.shape[0], self.ncfft
        tmp = self._work((x[:, 0::2], x[:, 1::2]), 1, 0)
        out_r = a.load(np.zeros((batch, n + 1)))
        out_i = a.load(np.zeros((batch, n + 1)))
        tdc = a.fixdiv((tmp[0][:, 0], tmp[1][:, 0]), 2)
        out_r[:, 0] = a.store(tdc[0] + tdc[1])
        out_r[:, n] = a.store(tdc[0] - tdc[1])
        k = np.arange(1, n // 2 + 1)
        if k.size:
            fpk = a.fixdiv((tmp[0][:, k], tmp[1][:, k]), 2)
            fpnk = a.fixdiv((tmp[0][:, n - k], a.store(-tmp[1][:, n - k])), 2)
            f1k, f2k = self._add(fpk, fpnk), self._sub(fpk, fpnk)
            tw = a.cmul(f2k, (self.super_twiddles[0][k - 1], self.super_twiddles[1][k - 1]))
            out_r[:, k] = a.half(f1k[0] + tw[0])
            out_i[:, k] = a.half(f1k[1] + tw[1])
            out_r[:, n - k] = a.half(f1k[0] - tw[0])      # k == n/2 is written twice,
            out_i[:, n - k] = a.half(tw[1] - f1k[1])      # this second write wins
        return np.stack([out_r, out_i], -1).astype(a.dtype)

    def inverse_real(self, spectra: np.ndarray) -> np.ndarray:
        """kiss_fftri over each row of `spectra` (B, nfft/2 + 1, 2): (B, nfft)."""
        a = self.a
        z = a.load(spectra)
        batch, n = z.shape[0], self.ncfft
        re, im = z[..., 0], z[..., 1]
        tmp_r = a.load(np.zeros((batch, n)))
        tmp_i = a.load(np.zeros((batch, n)))
        first = a.fixdiv((a.store(re[:, 0] + re[:, n]), a.store(re[:, 0] - re[:, n])), 2)
        tmp_r[:, 0], tmp_i[:, 0] = first
        k = np.arange(1, n // 2 + 1)
        if k.size:
            fk = a.fixdiv((re[:, k], im[:, k]), 2)
            fnkc = a.fixdiv((re[:, n - k], a.store(-im[:, n - k])), 2)
            fek, diff = self._add(fk, fnkc), self._sub(fk, fnkc)
            fok = a.cmul(diff, (self.super_twiddles[0][k - 1], self.super_twiddles[1][k - 1]))
            tmp_r[:, k], tmp_i[:, k] = self._add(fek, fok)
            low = self._sub(fek, fok)                   # k == n/2: this second write wins
            tmp_r[:, n - k], tmp_i[:, n - k] = low[0], a.store(-low[1])
        out = self._work((tmp_r, tmp_i), 1, 0)
        return np.stack(out, -1).reshape(batch, 2 * n).astype(a.dtype)
