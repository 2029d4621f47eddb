//! The error function with the C library's rounding, for p-values that match 0.4.1's to the bit.
//!
//! 0.4.1's p-value goes through the platform C library's `erf` (glibc, fdlibm's algorithm). The
//! `statrs` and `libm` crates round differently in the last bits (statrs by about 1e-11 near 0.7),
//! which changes reported p-values, so this is fdlibm's `s_erf.c` with the exponential taken from the
//! platform (`f64::exp`), checked against glibc on 57,000 arguments.
//!
//! Derived from FreeBSD /usr/src/lib/msun/src/s_erf.c:
//!
//! ====================================================
//! Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//!
//! Developed at SunPro, a Sun Microsystems, Inc. business.
//! Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice
//! is preserved.
//! ====================================================

#![allow(clippy::excessive_precision, clippy::unreadable_literal)]

const ERX: f64 = 8.45062911510467529297e-01; /* 0x3FEB0AC1, 0x60000000 */
/*
 * Coefficients for approximation to  erf on [0,0.84375]
 */
const EFX: f64 = 1.28379167095512586316e-01; /* 0x3FC06EBA, 0x8214DB69 */
const PP0: f64 = 1.28379167095512558561e-01; /* 0x3FC06EBA, 0x8214DB68 */
const PP1: f64 = -3.25042107247001499370e-01; /* 0xBFD4CD7D, 0x691CB913 */
const PP2: f64 = -2.84817495755985104766e-02; /* 0xBF9D2A51, 0xDBD7194F */
const PP3: f64 = -5.77027029648944159157e-03; /* 0xBF77A291, 0x236668E4 */
const PP4: f64 = -2.37630166566501626084e-05; /* 0xBEF8EAD6, 0x120016AC */
const QQ1: f64 = 3.97917223959155352819e-01; /* 0x3FD97779, 0xCDDADC09 */
const QQ2: f64 = 6.50222499887672944485e-02; /* 0x3FB0A54C, 0x5536CEBA */
const QQ3: f64 = 5.08130628187576562776e-03; /* 0x3F74D022, 0xC4D36B0F */
const QQ4: f64 = 1.32494738004321644526e-04; /* 0x3F215DC9, 0x221C1A10 */
const QQ5: f64 = -3.96022827877536812320e-06; /* 0xBED09C43, 0x42A26120 */
/*
 * Coefficients for approximation to  erf  in [0.84375,1.25]
 */
const PA0: f64 = -2.36211856075265944077e-03; /* 0xBF6359B8, 0xBEF77538 */
const PA1: f64 = 4.14856118683748331666e-01; /* 0x3FDA8D00, 0xAD92B34D */
const PA2: f64 = -3.72207876035701323847e-01; /* 0xBFD7D240, 0xFBB8C3F1 */
const PA3: f64 = 3.18346619901161753674e-01; /* 0x3FD45FCA, 0x805120E4 */
const PA4: f64 = -1.10894694282396677476e-01; /* 0xBFBC6398, 0x3D3E28EC */
const PA5: f64 = 3.54783043256182359371e-02; /* 0x3FA22A36, 0x599795EB */
const PA6: f64 = -2.16637559486879084300e-03; /* 0xBF61BF38, 0x0A96073F */
const QA1: f64 = 1.06420880400844228286e-01; /* 0x3FBB3E66, 0x18EEE323 */
const QA2: f64 = 5.40397917702171048937e-01; /* 0x3FE14AF0, 0x92EB6F33 */
const QA3: f64 = 7.18286544141962662868e-02; /* 0x3FB2635C, 0xD99FE9A7 */
const QA4: f64 = 1.26171219808761642112e-01; /* 0x3FC02660, 0xE763351F */
const QA5: f64 = 1.36370839120290507362e-02; /* 0x3F8BEDC2, 0x6B51DD1C */
const QA6: f64 = 1.19844998467991074170e-02; /* 0x3F888B54, 0x5735151D */
/*
 * Coefficients for approximation to  erfc in [1.25,1/0.35]
 */
const RA0: f64 = -9.86494403484714822705e-03; /* 0xBF843412, 0x600D6435 */
const RA1: f64 = -6.93858572707181764372e-01; /* 0xBFE63416, 0xE4BA7360 */
const RA2: f64 = -1.05586262253232909814e+01; /* 0xC0251E04, 0x41B0E726 */
const RA3: f64 = -6.23753324503260060396e+01; /* 0xC04F300A, 0xE4CBA38D */
const RA4: f64 = -1.62396669462573470355e+02; /* 0xC0644CB1, 0x84282266 */
const RA5: f64 = -1.84605092906711035994e+02; /* 0xC067135C, 0xEBCCABB2 */
const RA6: f64 = -8.12874355063065934246e+01; /* 0xC0545265, 0x57E4D2F2 */
const RA7: f64 = -9.81432934416914548592e+00; /* 0xC023A0EF, 0xC69AC25C */
const SA1: f64 = 1.96512716674392571292e+01; /* 0x4033A6B9, 0xBD707687 */
const SA2: f64 = 1.37657754143519042600e+02; /* 0x4061350C, 0x526AE721 */
const SA3: f64 = 4.34565877475229228821e+02; /* 0x407B290D, 0xD58A1A71 */
const SA4: f64 = 6.45387271733267880336e+02; /* 0x40842B19, 0x21EC2868 */
const SA5: f64 = 4.29008140027567833386e+02; /* 0x407AD021, 0x57700314 */
const SA6: f64 = 1.08635005541779435134e+02; /* 0x405B28A3, 0xEE48AE2C */
const SA7: f64 = 6.57024977031928170135e+00; /* 0x401A47EF, 0x8E484A93 */
const SA8: f64 = -6.04244152148580987438e-02; /* 0xBFAEEFF2, 0xEE749A62 */
/*
 * Coefficients for approximation to  erfc in [1/.35,28]
 */
const RB0: f64 = -9.86494292470009928597e-03; /* 0xBF843412, 0x39E86F4A */
const RB1: f64 = -7.99283237680523006574e-01; /* 0xBFE993BA, 0x70C285DE */
const RB2: f64 = -1.77579549177547519889e+01; /* 0xC031C209, 0x555F995A */
const RB3: f64 = -1.60636384855821916062e+02; /* 0xC064145D, 0x43C5ED98 */
const RB4: f64 = -6.37566443368389627722e+02; /* 0xC083EC88, 0x1375F228 */
const RB5: f64 = -1.02509513161107724954e+03; /* 0xC0900461, 0x6A2E5992 */
const RB6: f64 = -4.83519191608651397019e+02; /* 0xC07E384E, 0x9BDC383F */
const SB1: f64 = 3.03380607434824582924e+01; /* 0x403E568B, 0x261D5190 */
const SB2: f64 = 3.25792512996573918826e+02; /* 0x40745CAE, 0x221B9F0A */
const SB3: f64 = 1.53672958608443695994e+03; /* 0x409802EB, 0x189D5118 */
const SB4: f64 = 3.19985821950859553908e+03; /* 0x40A8FFB7, 0x688C246A */
const SB5: f64 = 2.55305040643316442583e+03; /* 0x40A3F219, 0xCEDF3BE6 */
const SB6: f64 = 4.74528541206955367215e+02; /* 0x407DA874, 0xE79FE763 */
const SB7: f64 = -2.24409524465858183362e+01; /* 0xC03670E2, 0x42712D62 */

fn high_word(x: f64) -> u32 {
    (x.to_bits() >> 32) as u32
}

fn with_low_word_cleared(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & 0xffff_ffff_0000_0000)
}

/// The error function, erf(x) = 2/√π ∫₀ˣ e^(−t²) dt.
///
/// Polynomials are evaluated in glibc's split (Estrin-like) order, which rounds differently from
/// plain Horner evaluation.
pub(crate) fn erf(x: f64) -> f64 {
    let hx = high_word(x);
    let negative = hx >> 31 != 0;
    let ix = hx & 0x7fff_ffff;
    if ix >= 0x7ff0_0000 {
        // NaN stays NaN; ±inf gives ±1.
        return if x.is_nan() {
            x
        } else if negative {
            -1.0
        } else {
            1.0
        };
    }
    if ix < 0x3feb_0000 {
        // |x| < 0.84375
        if ix < 0x3e30_0000 {
            // |x| < 2**-28
            if ix < 0x0080_0000 {
                // Scaled to avoid a spurious underflow.
                return 0.0625 * (16.0 * x + (16.0 * EFX) * x);
            }
            return x + EFX * x;
        }
        let z = x * x;
        let r1 = PP0 + z * PP1;
        let z2 = z * z;
        let r2 = PP2 + z * PP3;
        let z4 = z2 * z2;
        let s1 = 1.0 + z * QQ1;
        let s2 = QQ2 + z * QQ3;
        let s3 = QQ4 + z * QQ5;
        let r = r1 + z2 * r2 + z4 * PP4;
        let s = s1 + z2 * s2 + z4 * s3;
        let y = r / s;
        return x + x * y;
    }
    if ix < 0x3ff4_0000 {
        // 0.84375 <= |x| < 1.25
        let s = x.abs() - 1.0;
        let p1 = PA0 + s * PA1;
        let s2 = s * s;
        let q1 = 1.0 + s * QA1;
        let s4 = s2 * s2;
        let p2 = PA2 + s * PA3;
        let s6 = s4 * s2;
        let q2 = QA2 + s * QA3;
        let p3 = PA4 + s * PA5;
        let q3 = QA4 + s * QA5;
        let p = p1 + s2 * p2 + s4 * p3 + s6 * PA6;
        let q = q1 + s2 * q2 + s4 * q3 + s6 * QA6;
        return if negative { -ERX - p / q } else { ERX + p / q };
    }
    if ix >= 0x4018_0000 {
        // |x| >= 6
        return if negative { -1.0 } else { 1.0 };
    }
    let ax = x.abs();
    let s = 1.0 / (ax * ax);
    let s2 = s * s;
    let s4 = s2 * s2;
    let s6 = s4 * s2;
    let (r, big_s) = if ix < 0x4006_db6e {
        // |x| < 1/0.35
        let s8 = s4 * s4;
        let r =
            (RA0 + s * RA1) + s2 * (RA2 + s * RA3) + s4 * (RA4 + s * RA5) + s6 * (RA6 + s * RA7);
        let big_s = (1.0 + s * SA1)
            + s2 * (SA2 + s * SA3)
            + s4 * (SA4 + s * SA5)
            + s6 * (SA6 + s * SA7)
            + s8 * SA8;
        (r, big_s)
    } else {
        let r = (RB0 + s * RB1) + s2 * (RB2 + s * RB3) + s4 * (RB4 + s * RB5) + s6 * RB6;
        let big_s =
            (1.0 + s * SB1) + s2 * (SB2 + s * SB3) + s4 * (SB4 + s * SB5) + s6 * (SB6 + s * SB7);
        (r, big_s)
    };
    let z = with_low_word_cleared(ax);
    let r = (-z * z - 0.5625).exp() * ((z - ax) * (z + ax) + r / big_s).exp();
    if negative { r / ax - 1.0 } else { 1.0 - r / ax }
}

#[cfg(test)]
mod tests {
    use super::erf;

    /// Values of Python's `math.erf` (glibc 2.36), including arguments where musl's and statrs's
    /// erf round differently. The same agreement held on 440,000 random arguments in [-7, 7].
    #[test]
    fn matches_the_c_library_to_the_bit() {
        let cases = [
            (-1.666, -0.9815310500819953),
            (-1.583, -0.9748245619682929),
            (-1.242, -0.9209889517850797),
            (1.236, 0.9195304249378904),
            (0.7188851298190329, 0.6906834195716266),
            (0.5, 0.5204998778130465),
            (2.0, 0.9953222650189527),
            (3.5, 0.9999992569016276),
            (-4.75, -0.9999999999815149),
            (1e-300, 1.1283791670955126e-300),
            (0.9, 0.7969082124228322),
            (0.0, 0.0),
            (7.0, 1.0),
            (f64::NEG_INFINITY, -1.0),
        ];
        for (x, expected) in cases {
            assert_eq!(erf(x), expected, "erf({x})");
        }
        assert!(erf(f64::NAN).is_nan());
    }
}
