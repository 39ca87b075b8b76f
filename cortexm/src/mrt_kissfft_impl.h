/* micro_rt: KISS FFT's real FFT (kiss_fftr) and inverse (kiss_fftri) for one scalar type, written
 * from the algorithm of kernels/signal_kissfft.py (its numpy twin). Internal to mrt_signal_fft.c,
 * which includes it once per type after defining:
 *   KF_T         the scalar (int32_t, float)
 *   KF_CPX       its complex pair struct {KF_T r, i;}
 *   KF_NAME(x)   the name of this type's copy of x
 *   KF_ADD(a, b), KF_SUB(a, b), KF_NEG(a)  a sum stored back into KF_T (int32: wraps)
 *   KF_MUL(a, b) S_MUL (int32: the product rounded, >> 31; float: a * b)
 *   KF_CMUL_R(a, b), KF_CMUL_I(a, b)  C_MUL's parts (int32: rounded once after both products)
 *   KF_FIXDIV(x, div)  C_FIXDIV of one scalar (int32: times INT32_MAX / div, rounded; float: x)
 *   KF_HALF(x)   HALF_OF of a KF_T (int32: >> 1; float: * 0.5f)
 * Every operation is in the twin's order, so results are bit-equal (float: -ffp-contract=off). */

static inline KF_CPX KF_NAME(fixdiv)(KF_CPX c, int32_t div)
{
    KF_CPX o = {KF_FIXDIV(c.r, div), KF_FIXDIV(c.i, div)};
    return o;
}

static inline KF_CPX KF_NAME(cmul)(KF_CPX a, KF_CPX b)
{
    KF_CPX o = {KF_CMUL_R(a, b), KF_CMUL_I(a, b)};
    return o;
}

static inline KF_CPX KF_NAME(cadd)(KF_CPX a, KF_CPX b)
{
    KF_CPX o = {KF_ADD(a.r, b.r), KF_ADD(a.i, b.i)};
    return o;
}

static inline KF_CPX KF_NAME(csub)(KF_CPX a, KF_CPX b)
{
    KF_CPX o = {KF_SUB(a.r, b.r), KF_SUB(a.i, b.i)};
    return o;
}

static void KF_NAME(bfly2)(KF_CPX *f, int32_t fstride, const KF_CPX *tw, int32_t m)
{
    for (int32_t k = 0; k < m; ++k) {
        const KF_CPX a = KF_NAME(fixdiv)(f[k], 2);
        const KF_CPX t = KF_NAME(cmul)(KF_NAME(fixdiv)(f[k + m], 2), tw[k * fstride]);
        f[k + m] = KF_NAME(csub)(a, t);
        f[k] = KF_NAME(cadd)(a, t);
    }
}

static void KF_NAME(bfly3)(KF_CPX *f, int32_t fstride, const KF_CPX *tw, int32_t m)
{
    const KF_T epi3_i = tw[fstride * m].i;
    for (int32_t k = 0; k < m; ++k) {
        KF_CPX f0 = KF_NAME(fixdiv)(f[k], 3);
        const KF_CPX s1 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[k + m], 3), tw[k * fstride]);
        const KF_CPX s2 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[k + 2 * m], 3), tw[2 * k * fstride]);
        const KF_CPX s3 = KF_NAME(cadd)(s1, s2);
        KF_CPX s0 = KF_NAME(csub)(s1, s2);
        KF_CPX f1 = {KF_SUB(f0.r, KF_HALF(s3.r)), KF_SUB(f0.i, KF_HALF(s3.i))};
        s0.r = KF_MUL(s0.r, epi3_i);
        s0.i = KF_MUL(s0.i, epi3_i);
        f0 = KF_NAME(cadd)(f0, s3);
        f[k + 2 * m].r = KF_ADD(f1.r, s0.i);
        f[k + 2 * m].i = KF_SUB(f1.i, s0.r);
        f1.r = KF_SUB(f1.r, s0.i);
        f1.i = KF_ADD(f1.i, s0.r);
        f[k] = f0;
        f[k + m] = f1;
    }
}

static void KF_NAME(bfly4)(KF_CPX *f, int32_t fstride, const KF_CPX *tw, int32_t m, int32_t inverse)
{
    for (int32_t k = 0; k < m; ++k) {
        KF_CPX f0 = KF_NAME(fixdiv)(f[k], 4);
        const KF_CPX s0 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[k + m], 4), tw[k * fstride]);
        const KF_CPX s1 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[k + 2 * m], 4), tw[2 * k * fstride]);
        const KF_CPX s2 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[k + 3 * m], 4), tw[3 * k * fstride]);
        const KF_CPX s5 = KF_NAME(csub)(f0, s1);
        f0 = KF_NAME(cadd)(f0, s1);
        const KF_CPX s3 = KF_NAME(cadd)(s0, s2), s4 = KF_NAME(csub)(s0, s2);
        f[k + 2 * m] = KF_NAME(csub)(f0, s3);
        f[k] = KF_NAME(cadd)(f0, s3);
        if (inverse) {
            f[k + m].r = KF_SUB(s5.r, s4.i);
            f[k + m].i = KF_ADD(s5.i, s4.r);
            f[k + 3 * m].r = KF_ADD(s5.r, s4.i);
            f[k + 3 * m].i = KF_SUB(s5.i, s4.r);
        } else {
            f[k + m].r = KF_ADD(s5.r, s4.i);
            f[k + m].i = KF_SUB(s5.i, s4.r);
            f[k + 3 * m].r = KF_SUB(s5.r, s4.i);
            f[k + 3 * m].i = KF_ADD(s5.i, s4.r);
        }
    }
}

static void KF_NAME(bfly5)(KF_CPX *f, int32_t fstride, const KF_CPX *tw, int32_t m)
{
    const KF_CPX ya = tw[fstride * m], yb = tw[fstride * 2 * m];
    for (int32_t u = 0; u < m; ++u) {
        const KF_CPX s0 = KF_NAME(fixdiv)(f[u], 5);
        const KF_CPX s1 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[u + m], 5), tw[u * fstride]);
        const KF_CPX s2 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[u + 2 * m], 5), tw[2 * u * fstride]);
        const KF_CPX s3 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[u + 3 * m], 5), tw[3 * u * fstride]);
        const KF_CPX s4 = KF_NAME(cmul)(KF_NAME(fixdiv)(f[u + 4 * m], 5), tw[4 * u * fstride]);
        const KF_CPX s7 = KF_NAME(cadd)(s1, s4), s10 = KF_NAME(csub)(s1, s4);
        const KF_CPX s8 = KF_NAME(cadd)(s2, s3), s9 = KF_NAME(csub)(s2, s3);
        /* Fout0 += s7 + s8 */
        f[u].r = KF_ADD(s0.r, KF_ADD(s7.r, s8.r));
        f[u].i = KF_ADD(s0.i, KF_ADD(s7.i, s8.i));
        KF_CPX s5, s6, s11, s12;
        s5.r = KF_ADD(KF_ADD(s0.r, KF_MUL(s7.r, ya.r)), KF_MUL(s8.r, yb.r));
        s5.i = KF_ADD(KF_ADD(s0.i, KF_MUL(s7.i, ya.r)), KF_MUL(s8.i, yb.r));
        s6.r = KF_ADD(KF_MUL(s10.i, ya.i), KF_MUL(s9.i, yb.i));
        s6.i = KF_SUB(KF_NEG(KF_MUL(s10.r, ya.i)), KF_MUL(s9.r, yb.i));
        f[u + m] = KF_NAME(csub)(s5, s6);
        f[u + 4 * m] = KF_NAME(cadd)(s5, s6);
        s11.r = KF_ADD(KF_ADD(s0.r, KF_MUL(s7.r, yb.r)), KF_MUL(s8.r, ya.r));
        s11.i = KF_ADD(KF_ADD(s0.i, KF_MUL(s7.i, yb.r)), KF_MUL(s8.i, ya.r));
        s12.r = KF_ADD(KF_NEG(KF_MUL(s10.i, yb.i)), KF_MUL(s9.i, ya.i));
        s12.i = KF_SUB(KF_MUL(s10.r, yb.i), KF_MUL(s9.r, ya.i));
        f[u + 2 * m] = KF_NAME(cadd)(s11, s12);
        f[u + 3 * m] = KF_NAME(csub)(s11, s12);
    }
}

/* kf_work: a mixed-radix decimation in time, each stage's p sub-transforms first. */
static void KF_NAME(work)(KF_CPX *out, const KF_CPX *in, int32_t fstride, const int32_t *factors,
                          const KF_CPX *tw, int32_t inverse)
{
    const int32_t p = factors[0], m = factors[1];
    if (m == 1) {
        for (int32_t k = 0; k < p; ++k) {
            out[k] = in[k * fstride];
        }
    } else {
        for (int32_t k = 0; k < p; ++k) {
            KF_NAME(work)(out + k * m, in + k * fstride, fstride * p, factors + 2, tw, inverse);
        }
    }
    switch (p) {
    case 2: KF_NAME(bfly2)(out, fstride, tw, m); break;
    case 3: KF_NAME(bfly3)(out, fstride, tw, m); break;
    case 4: KF_NAME(bfly4)(out, fstride, tw, m, inverse); break;
    default: KF_NAME(bfly5)(out, fstride, tw, m); break;
    }
}

/* kiss_fftr of each frame, zero-padded to fft_length in p->work. */
static void KF_NAME(rfft)(const mrt_signal_fft_params *p)
{
    const int32_t n = p->fft_length / 2;
    const KF_CPX *tw = (const KF_CPX *)p->twiddles, *super = (const KF_CPX *)p->super_twiddles;
    KF_CPX *tmp = (KF_CPX *)p->tmp;
    KF_T *work = (KF_T *)p->work;
    for (int32_t frame = 0; frame < p->frames; ++frame) {
        const KF_T *x = (const KF_T *)p->input + frame * p->input_length;
        KF_CPX *y = (KF_CPX *)p->output + frame * p->output_length;
        for (int32_t i = 0; i < p->fft_length; ++i) {
            work[i] = i < p->input_length ? x[i] : (KF_T)0;
        }
        KF_NAME(work)(tmp, (const KF_CPX *)work, 1, p->factors, tw, 0);
        const KF_CPX dc = KF_NAME(fixdiv)(tmp[0], 2);
        y[0].r = KF_ADD(dc.r, dc.i);
        y[n].r = KF_SUB(dc.r, dc.i);
        y[0].i = y[n].i = (KF_T)0;
        for (int32_t k = 1; k <= n / 2; ++k) {
            const KF_CPX fpk = KF_NAME(fixdiv)(tmp[k], 2);
            KF_CPX fpnk = {tmp[n - k].r, KF_NEG(tmp[n - k].i)};
            fpnk = KF_NAME(fixdiv)(fpnk, 2);
            const KF_CPX f1k = KF_NAME(cadd)(fpk, fpnk), f2k = KF_NAME(csub)(fpk, fpnk);
            const KF_CPX t = KF_NAME(cmul)(f2k, super[k - 1]);
            y[k].r = KF_HALF(KF_ADD(f1k.r, t.r));
            y[k].i = KF_HALF(KF_ADD(f1k.i, t.i));
            y[n - k].r = KF_HALF(KF_SUB(f1k.r, t.r));      /* k == n/2: this second write wins */
            y[n - k].i = KF_HALF(KF_SUB(t.i, f1k.i));
        }
    }
}

/* kiss_fftri of each frame's fft_length/2 + 1 complex values into fft_length samples. */
static void KF_NAME(irfft)(const mrt_signal_fft_params *p)
{
    const int32_t n = p->fft_length / 2;
    const KF_CPX *tw = (const KF_CPX *)p->twiddles, *super = (const KF_CPX *)p->super_twiddles;
    KF_CPX *tmp = (KF_CPX *)p->tmp;
    for (int32_t frame = 0; frame < p->frames; ++frame) {
        const KF_CPX *z = (const KF_CPX *)p->input + frame * p->input_length;
        KF_CPX first = {KF_ADD(z[0].r, z[n].r), KF_SUB(z[0].r, z[n].r)};
        tmp[0] = KF_NAME(fixdiv)(first, 2);
        for (int32_t k = 1; k <= n / 2; ++k) {
            const KF_CPX fk = KF_NAME(fixdiv)(z[k], 2);
            KF_CPX fnkc = {z[n - k].r, KF_NEG(z[n - k].i)};
            fnkc = KF_NAME(fixdiv)(fnkc, 2);
            const KF_CPX fek = KF_NAME(cadd)(fk, fnkc);
            const KF_CPX fok = KF_NAME(cmul)(KF_NAME(csub)(fk, fnkc), super[k - 1]);
            tmp[k] = KF_NAME(cadd)(fek, fok);
            tmp[n - k] = KF_NAME(csub)(fek, fok);
            tmp[n - k].i = KF_NEG(tmp[n - k].i);
        }
        KF_NAME(work)((KF_CPX *)((KF_T *)p->output + frame * p->output_length), tmp, 1, p->factors,
                      tw, 1);
    }
}
