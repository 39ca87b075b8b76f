"""KISS FFT (v130, as TFLM's Signal library builds it with FIXED_POINT=16), in numpy.

TFLM's SignalRfft runs `kiss_fftr` on int16: a complex FFT of half the length on the samples
taken in pairs, then a split into the real spectrum. Every stage divides its inputs by the
radix first (C_FIXDIV), every product rounds (sround: +2^14, >> 15) and every sum is stored
back into int16; this file follows those steps in the same order, vectorised over the
independent butterflies, so the result is bit-exact. The FFT is a recursive mixed-radix
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

import numpy as np

from .signal_common import wrap

FRACBITS = 15
SAMP_MAX = 32767
CPX_BYTES = 4                  # kiss_fft_cpx of two int16
FFT_STATE_FIXED_BYTES = 264    # kiss_fft_state before its twiddles: 2 ints + 64 factors


def fftr_state_bytes(nfft: int, pointer_size: int) -> int:
    """kiss_fftr_alloc's memneeded for an int16 real FFT of length nfft (even)."""
    half = nfft // 2
    sub = FFT_STATE_FIXED_BYTES + CPX_BYTES * max(half, 1)     # twiddles[1] is in the struct
    return 3 * pointer_size + sub + CPX_BYTES * (half * 3 // 2)


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


def _cexp(phase: float) -> tuple[int, int]:
    """kf_cexp in fixed point: floor(.5 + 32767 cos/sin(phase)) (C's double libm)."""
    return (int(wrap(math.floor(0.5 + SAMP_MAX * math.cos(phase)), 16)),
            int(wrap(math.floor(0.5 + SAMP_MAX * math.sin(phase)), 16)))


def _sround(x: np.ndarray) -> np.ndarray:
    return wrap((x + (1 << (FRACBITS - 1))) >> FRACBITS, 16)


def _fixdiv(c: tuple, div: int) -> tuple:
    k = SAMP_MAX // div
    return _sround(c[0] * k), _sround(c[1] * k)


def _cmul(a: tuple, b: tuple) -> tuple:
    return (_sround(a[0] * b[0] - a[1] * b[1]), _sround(a[0] * b[1] + a[1] * b[0]))


def _add(a: tuple, b: tuple) -> tuple:
    return wrap(a[0] + b[0], 16), wrap(a[1] + b[1], 16)


def _sub(a: tuple, b: tuple) -> tuple:
    return wrap(a[0] - b[0], 16), wrap(a[1] - b[1], 16)


@dataclass
class KissFftr:
    """The int16 real-FFT plan (kiss_fftr_alloc): forward (`__call__`, kiss_fftr) or, with
    inverse=True, inverse (`inverse_real`, kiss_fftri; conjugate twiddles)."""
    nfft: int
    inverse: bool = False

    def __post_init__(self) -> None:
        n = self.nfft // 2
        self.ncfft = n
        self.factors = _factor(n)
        sign = -1.0 if self.inverse else 1.0
        tw = [_cexp(sign * (-2 * math.pi * i / n)) for i in range(n)]
        self.twiddles = (np.array([t[0] for t in tw], np.int64), np.array([t[1] for t in tw], np.int64))
        sup = [_cexp(sign * (-math.pi * ((i + 1) / n + 0.5))) for i in range(n // 2)]
        self.super_twiddles = (np.array([t[0] for t in sup], np.int64).reshape(-1),
                               np.array([t[1] for t in sup], np.int64).reshape(-1))

    def _tw(self, index: np.ndarray) -> tuple:
        return self.twiddles[0][index], self.twiddles[1][index]

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
        f0, f1 = _fixdiv(f[0], 2), _fixdiv(f[1], 2)
        t = _cmul(f1, self._tw(k * fstride))
        return [_add(f0, t), _sub(f0, t)]

    def _bfly4(self, f: list, fstride: int, k: np.ndarray) -> list:
        f0, f1, f2, f3 = (_fixdiv(c, 4) for c in f)
        s0 = _cmul(f1, self._tw(k * fstride))
        s1 = _cmul(f2, self._tw(k * fstride * 2))
        s2 = _cmul(f3, self._tw(k * fstride * 3))
        s5 = _sub(f0, s1)
        f0 = _add(f0, s1)
        s3, s4 = _add(s0, s2), _sub(s0, s2)
        f2 = _sub(f0, s3)
        f0 = _add(f0, s3)
        if self.inverse:
            f1 = (wrap(s5[0] - s4[1], 16), wrap(s5[1] + s4[0], 16))
            f3 = (wrap(s5[0] + s4[1], 16), wrap(s5[1] - s4[0], 16))
        else:
            f1 = (wrap(s5[0] + s4[1], 16), wrap(s5[1] - s4[0], 16))
            f3 = (wrap(s5[0] - s4[1], 16), wrap(s5[1] + s4[0], 16))
        return [f0, f1, f2, f3]

    def _bfly3(self, f: list, fstride: int, k: np.ndarray, m: int) -> list:
        epi3_i = int(self.twiddles[1][fstride * m])
        f0, f1, f2 = (_fixdiv(c, 3) for c in f)
        s1 = _cmul(f1, self._tw(k * fstride))
        s2 = _cmul(f2, self._tw(k * fstride * 2))
        s3, s0 = _add(s1, s2), _sub(s1, s2)
        f1 = (wrap(f0[0] - (s3[0] >> 1), 16), wrap(f0[1] - (s3[1] >> 1), 16))
        s0 = (_sround(s0[0] * epi3_i), _sround(s0[1] * epi3_i))
        f0 = _add(f0, s3)
        f2 = (wrap(f1[0] + s0[1], 16), wrap(f1[1] - s0[0], 16))
        f1 = (wrap(f1[0] - s0[1], 16), wrap(f1[1] + s0[0], 16))
        return [f0, f1, f2]

    def _bfly5(self, f: list, fstride: int, k: np.ndarray, m: int) -> list:
        ya = (int(self.twiddles[0][fstride * m]), int(self.twiddles[1][fstride * m]))
        yb = (int(self.twiddles[0][fstride * 2 * m]), int(self.twiddles[1][fstride * 2 * m]))
        f0, f1, f2, f3, f4 = (_fixdiv(c, 5) for c in f)
        s1 = _cmul(f1, self._tw(k * fstride))
        s2 = _cmul(f2, self._tw(2 * k * fstride))
        s3 = _cmul(f3, self._tw(3 * k * fstride))
        s4 = _cmul(f4, self._tw(4 * k * fstride))
        s7, s10 = _add(s1, s4), _sub(s1, s4)
        s8, s9 = _add(s2, s3), _sub(s2, s3)
        s0 = f0
        out0 = (wrap(f0[0] + s7[0] + s8[0], 16), wrap(f0[1] + s7[1] + s8[1], 16))
        sm = _sround
        s5 = (wrap(s0[0] + sm(s7[0] * ya[0]) + sm(s8[0] * yb[0]), 16),
              wrap(s0[1] + sm(s7[1] * ya[0]) + sm(s8[1] * yb[0]), 16))
        s6 = (wrap(sm(s10[1] * ya[1]) + sm(s9[1] * yb[1]), 16),
              wrap(-sm(s10[0] * ya[1]) - sm(s9[0] * yb[1]), 16))
        out1, out4 = _sub(s5, s6), _add(s5, s6)
        s11 = (wrap(s0[0] + sm(s7[0] * yb[0]) + sm(s8[0] * ya[0]), 16),
               wrap(s0[1] + sm(s7[1] * yb[0]) + sm(s8[1] * ya[0]), 16))
        s12 = (wrap(-sm(s10[1] * yb[1]) + sm(s9[1] * ya[1]), 16),
               wrap(sm(s10[0] * yb[1]) - sm(s9[0] * ya[1]), 16))
        out2, out3 = _add(s11, s12), _sub(s11, s12)
        return [out0, out1, out2, out3, out4]

    def __call__(self, frames: np.ndarray) -> np.ndarray:
        """kiss_fftr (a forward plan) over each row of int16 `frames` (B, nfft): (B, nfft/2 + 1, 2) int16."""
        x = np.asarray(frames, np.int64)
        batch, n = x.shape[0], self.ncfft
        tmp = self._work((x[:, 0::2], x[:, 1::2]), 1, 0)
        out_r = np.zeros((batch, n + 1), np.int64)
        out_i = np.zeros((batch, n + 1), np.int64)
        tdc = _fixdiv((tmp[0][:, 0], tmp[1][:, 0]), 2)
        out_r[:, 0] = wrap(tdc[0] + tdc[1], 16)
        out_r[:, n] = wrap(tdc[0] - tdc[1], 16)
        k = np.arange(1, n // 2 + 1)
        if k.size:
            fpk = _fixdiv((tmp[0][:, k], tmp[1][:, k]), 2)
            fpnk = _fixdiv((tmp[0][:, n - k], wrap(-tmp[1][:, n - k], 16)), 2)
            f1k, f2k = _add(fpk, fpnk), _sub(fpk, fpnk)
            tw = _cmul(f2k, (self.super_twiddles[0][k - 1], self.super_twiddles[1][k - 1]))
            out_r[:, k] = wrap((f1k[0] + tw[0]) >> 1, 16)
            out_i[:, k] = wrap((f1k[1] + tw[1]) >> 1, 16)
            out_r[:, n - k] = wrap((f1k[0] - tw[0]) >> 1, 16)    # k == n/2 is written twice,
            out_i[:, n - k] = wrap((tw[1] - f1k[1]) >> 1, 16)    # this second write wins
        return np.stack([out_r, out_i], -1).astype(np.int16)

    def inverse_real(self, spectra: np.ndarray) -> np.ndarray:
        """kiss_fftri over each row of int16 `spectra` (B, nfft/2 + 1, 2): (B, nfft) int16."""
        z = np.asarray(spectra, np.int64)
        batch, n = z.shape[0], self.ncfft
        re, im = z[..., 0], z[..., 1]
        tmp_r = np.zeros((batch, n), np.int64)
        tmp_i = np.zeros((batch, n), np.int64)
        first = _fixdiv((wrap(re[:, 0] + re[:, n], 16), wrap(re[:, 0] - re[:, n], 16)), 2)
        tmp_r[:, 0], tmp_i[:, 0] = first
        k = np.arange(1, n // 2 + 1)
        if k.size:
            fk = _fixdiv((re[:, k], im[:, k]), 2)
            fnkc = _fixdiv((re[:, n - k], wrap(-im[:, n - k], 16)), 2)
            fek, diff = _add(fk, fnkc), _sub(fk, fnkc)
            fok = _cmul(diff, (self.super_twiddles[0][k - 1], self.super_twiddles[1][k - 1]))
            tmp_r[:, k], tmp_i[:, k] = _add(fek, fok)
            low = _sub(fek, fok)                   # k == n/2: this second write wins
            tmp_r[:, n - k], tmp_i[:, n - k] = low[0], wrap(-low[1], 16)
        out = self._work((tmp_r, tmp_i), 1, 0)
        return np.stack(out, -1).reshape(batch, 2 * n).astype(np.int16)
