//! Property tests of the N:M module: masks, the enumeration oracle, 2-D tiles, exports and the
//! permutation search.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/oracles.rs"]
mod oracles;
use nm as nm2d;
use nm as permute;
use proptest::prelude::*;
use sparsekit_wasm::ErrorKind;
use sparsekit_wasm::{export, nm};

/// Values that exercise ties (small integers, `±0.0`), the full finite range (subnormals, huge)
/// and, rarely, infinities and NaN.
fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => (-3i8..=3).prop_map(f32::from),
        6 => proptest::num::f32::NORMAL | proptest::num::f32::SUBNORMAL | proptest::num::f32::ZERO,
        1 => Just(-0.0f32),
        1 => prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY)],
    ]
}

fn finite() -> impl Strategy<Value = f32> {
    prop_oneof![(-3i8..=3).prop_map(f32::from), -100.0f32..100.0f32, Just(-0.0f32)]
}

/// `(m, n, rows, cols, values)` with `cols % m == 0`.
fn nm_matrix(max_m: usize) -> impl Strategy<Value = (usize, usize, usize, usize, Vec<f32>)> {
    (1..=max_m).prop_flat_map(|m| (Just(m), 0..=m, 0usize..4, 0usize..4)).prop_flat_map(|(m, n, rows, groups)| {
        let cols = groups * m;
        (Just(m), Just(n), Just(rows), Just(cols), proptest::collection::vec(value(), rows * cols))
    })
}

fn matrix4(max_tiles: usize) -> impl Strategy<Value = (usize, usize, Vec<f32>)> {
    (1..=max_tiles, 1..=max_tiles).prop_flat_map(|(tr, tc)| (Just(4 * tr), Just(4 * tc), proptest::collection::vec(finite(), 16 * tr * tc)))
}

/// Magnitude rank key used by the spec: NaN lowest, `|-0.0| == 0`.
fn key(x: f32) -> f64 {
    if x.is_nan() {
        -1.0
    } else {
        f64::from(x.abs())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn mn_1d_best_keeps_top_n_and_matches_the_oracle((m, n, rows, cols, v) in nm_matrix(10)) {
        let mask = nm::mn_1d_best(&v, rows, cols, m, n).unwrap();
        prop_assert_eq!(mask.len(), v.len());
        for (g, mk) in v.chunks_exact(m).zip(mask.chunks_exact(m)) {
            prop_assert_eq!(mk.iter().filter(|&&k| k == 1).count(), n);
            prop_assert!(mk.iter().all(|&k| k <= 1));
            // Every kept element outranks every pruned one (ties: lower index kept).
            for i in 0..m {
                for j in 0..m {
                    if mk[i] == 1 && mk[j] == 0 {
                        prop_assert!(key(g[i]) > key(g[j]) || (key(g[i]) == key(g[j]) && i < j));
                    }
                }
            }
        }
        prop_assert_eq!(oracles::mn_1d_best_enumerate(&v, rows, cols, m, n).unwrap(), mask);
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn m4n2_is_mn_1d_best((_, _, rows, cols, v) in nm_matrix(4).prop_filter("m=4", |t| t.0 == 4)) {
        prop_assert_eq!(nm::m4n2_1d(&v, rows, cols).unwrap(), nm::mn_1d_best(&v, rows, cols, 4, 2).unwrap());
    }

    #[test]
    fn patterns_are_distinct_sorted_and_counted(m in 1usize..=10, n in 0usize..=10) {
        let p = nm::compute_valid_1d_patterns(m, n);
        if n > m {
            prop_assert_eq!(p.unwrap_err().kind(), ErrorKind::InvalidNmPattern);
            return Ok(());
        }
        let p = p.unwrap();
        let rows: Vec<&[u8]> = p.chunks_exact(m).collect();
        let c = (0..n).fold(1usize, |c, i| c * (m - i) / (i + 1));
        prop_assert_eq!(rows.len(), c);
        for r in &rows {
            prop_assert_eq!(r.iter().filter(|&&x| x == 1).count(), n);
        }
        // combinations order = descending lexicographic order of the 0/1 rows.
        for w in rows.windows(2) {
            prop_assert!(w[0] > w[1]);
        }
    }

    #[test]
    fn asp_mask_groups_along_input_channels(
        (k, c4, r, s) in (1usize..3, 1usize..3, 1usize..3, 1usize..3),
        seed in proptest::collection::vec(finite(), 64 * 9),
    ) {
        let cc = 4 * c4;
        let shape = [k, cc, r, s];
        let v = &seed[..k * cc * r * s];
        let mask = nm::create_asp_mask(v, &shape, "m4n2_1d").unwrap();
        // Each (k, r, s) and each 4 consecutive input channels form one group.
        for ki in 0..k { for ri in 0..r { for si in 0..s { for g in 0..c4 {
            let at = |ci: usize| ((ki * cc + 4 * g + ci) * r + ri) * s + si;
            let vals: Vec<f32> = (0..4).map(|ci| v[at(ci)]).collect();
            let want = nm::m4n2_1d(&vals, 1, 4).unwrap();
            let got: Vec<u8> = (0..4).map(|ci| mask[at(ci)]).collect();
            prop_assert_eq!(got, want);
        }}}}
        // 3-D (K, C, R): the same with S = 1.
        let v3 = &seed[..k * cc * r];
        let m3 = nm::create_asp_mask(v3, &[k, cc, r], "m4n2_1d").unwrap();
        let m4 = nm::create_asp_mask(v3, &[k, cc, r, 1], "m4n2_1d").unwrap();
        prop_assert_eq!(m3, m4);
    }

    #[test]
    fn two_d_masks_are_transposable_2_4((rows, cols, v) in matrix4(3)) {
        let greedy = nm2d::m4n2_2d_greedy(&v, rows, cols).unwrap();
        let best = nm2d::m4n2_2d_best(&v, rows, cols).unwrap();
        for mask in [&greedy, &best] {
            for tr in (0..rows).step_by(4) { for tc in (0..cols).step_by(4) {
                for i in 0..4 {
                    let row: u8 = (0..4).map(|j| mask[(tr + i) * cols + tc + j]).sum();
                    let col: u8 = (0..4).map(|j| mask[(tr + j) * cols + tc + i]).sum();
                    prop_assert_eq!((row, col), (2, 2));
                }
            }}
        }
        // best is optimal per tile among the 90 valid tiles, hence never below greedy.
        let pats = nm2d::valid_2d_patterns();
        for tr in (0..rows).step_by(4) { for tc in (0..cols).step_by(4) {
            let at = |i: usize| (tr + i / 4) * cols + tc + i % 4;
            let kept = |m: &dyn Fn(usize) -> u8| (0..16).filter(|&i| m(i) == 1).map(|i| f64::from(v[at(i)].abs())).sum::<f64>();
            let b = kept(&|i| best[at(i)]);
            prop_assert!(b >= kept(&|i| greedy[at(i)]));
            for p in pats.chunks_exact(16) {
                prop_assert!(b >= kept(&|i| p[i]));
            }
        }}
        // As ASP patterns on the same matrix.
        prop_assert_eq!(nm::create_asp_mask(&v, &[rows, cols], "m4n2_2d_best").unwrap(), best);
    }

    #[test]
    fn exports_round_trip((rows, cols, v) in matrix4(3), bh in 1usize..=4, bw in 1usize..=4) {
        let as_bits = |d: &[f32]| d.iter().map(|&x| if x == 0.0 { 0 } else { x.to_bits() }).collect::<Vec<_>>();
        let csr = export::to_csr(&v, rows, cols).unwrap();
        prop_assert_eq!(csr.nnz(), v.iter().filter(|&&x| x != 0.0).count());
        prop_assert_eq!(as_bits(&export::csr_to_dense(&csr).unwrap()), as_bits(&v));
        prop_assert_eq!(csr.byte_size(), 4 * (rows + 1) + 8 * csr.nnz());
        if rows % bh == 0 && cols % bw == 0 {
            let bsr = export::to_bsr(&v, rows, cols, bh, bw).unwrap();
            prop_assert_eq!(as_bits(&export::bsr_to_dense(&bsr).unwrap()), as_bits(&v));
            prop_assert_eq!(bsr.values.len(), bsr.num_blocks() * bh * bw);
        } else {
            prop_assert_eq!(export::to_bsr(&v, rows, cols, bh, bw).unwrap_err().kind(), ErrorKind::InvalidBlockShape);
        }
        let mask = nm::m4n2_1d(&v, rows, cols).unwrap();
        let pruned: Vec<f32> = v.iter().zip(&mask).map(|(&x, &k)| x * f32::from(k)).collect();
        let c = export::to_nm24(&pruned, rows, cols).unwrap();
        prop_assert_eq!(c.values.len(), rows * cols / 2);
        prop_assert_eq!(c.byte_size(), export::nm24_bytes(rows, cols));
        prop_assert_eq!(as_bits(&export::nm24_to_dense(&c).unwrap()), as_bits(&pruned));
    }

    #[test]
    fn permutation_search_never_loses(
        (rows, groups) in (1usize..6, 2usize..5),
        seed in proptest::collection::vec(finite(), 5 * 16),
        (m, n) in prop_oneof![Just((4usize, 2usize)), Just((4, 1)), Just((2, 1)), Just((8, 4))],
    ) {
        let cols = groups * m;
        let v: Vec<f32> = seed.iter().cycle().take(rows * cols).enumerate()
            .map(|(i, &x)| x + (i % 7) as f32 * 0.125).collect();
        let res = permute::search_permutation(&v, rows, cols, m, n, 8).unwrap();
        let mut sorted = res.perm.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..cols).collect::<Vec<_>>());
        prop_assert!(res.kept_after >= res.kept_before);
        prop_assert_eq!(res.kept_before, permute::nm_kept_magnitude(&v, rows, cols, m, n).unwrap());
        let p = permute::permute_columns(&v, rows, cols, &res.perm).unwrap();
        prop_assert_eq!(res.kept_after, permute::nm_kept_magnitude(&p, rows, cols, m, n).unwrap());
        let inv = permute::invert_permutation(&res.perm).unwrap();
        prop_assert_eq!(permute::permute_columns(&p, rows, cols, &inv).unwrap(), v);
    }
}

#[test]
fn oracle_uses_exact_sums() {
    // {1e30, 1e-30} beats {1e30, 0}, although both round to 1e30 in f64.
    let v = [1e30, 0.0, 1e-30, 0.0];
    assert_eq!(oracles::mn_1d_best_enumerate(&v, 1, 4, 4, 2).unwrap(), vec![1, 0, 1, 0]);
    assert_eq!(nm::mn_1d_best(&v, 1, 4, 4, 2).unwrap(), vec![1, 0, 1, 0]);
    let mut a = oracles::ExactSum::default();
    a.add(f32::MAX);
    a.add(f32::MAX);
    let mut b = oracles::ExactSum::default();
    b.add(f32::MAX);
    b.add(f32::from_bits(1));
    assert!(a > b);
}
