//! Fuzz target over the core's structure construction and every operation of View, BlockSpec,
//! BlockCoupling, ScopeSpec and ScopeCoupling, driven by arbitrary bytes (hand-rolled reader).
//!
//! Asserts: no panic (libFuzzer reports one as a crash), and every refused call (`Err`) left
//! every weight bit-identical; read-only calls never change a weight either.
//!
//! Run: `bash scripts/fuzz.sh [seconds]` (see docs/errors.md for the exact commands).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sparsekit_wasm::block::{BlockSpec, Norm, SoftOptions};
use sparsekit_wasm::{BlockCoupling, Method};
use sparsekit_wasm::Param;
use sparsekit_wasm::scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
use sparsekit_wasm::{self as view, View};
use sparsekit_wasm::Result;

mod bytes;
use bytes::Bytes;

const MAX_WORK: usize = 4096;

fn snapshot(ps: &[Param]) -> Vec<Vec<u32>> {
    ps.iter().map(|p| p.data().iter().map(|x| x.to_bits()).collect()).collect()
}

/// Runs `f`; on `Err`, every param must be bit-identical to before. `read_only` ops must never
/// change anything.
fn guarded<T>(ps: &[Param], read_only: bool, what: &str, f: impl FnOnce() -> Result<T>) -> Option<T> {
    let before = snapshot(ps);
    let r = f();
    let failed = r.is_err();
    if failed || read_only {
        assert!(snapshot(ps) == before, "{what}: weights changed by a {} call", if failed { "refused" } else { "read-only" });
    }
    r.ok()
}

fn opts(b: &mut Bytes) -> SoftOptions {
    SoftOptions {
        max_iter: b.below(25),
        atol: if b.bool() { 1e-8 } else { b.f32() },
        eps: if b.bool() { None } else { Some(b.f32()) },
        method: if b.bool() { Method::Newton } else { Method::Bisection },
    }
}

/// A values array for a spec: param length, view length, or a wrong one.
fn spec_values(b: &mut Bytes, s: &BlockSpec) -> Option<Vec<f32>> {
    match b.below(4) {
        0 => None,
        1 => Some(b.f32s(s.view().param().numel())),
        2 => Some(b.f32s(s.view().numel())),
        _ => {
            let n = b.below(10);
            Some(b.f32s(n))
        }
    }
}

fn node_values(b: &mut Bytes, n: &BlockNode) -> Option<Vec<Vec<f32>>> {
    if b.below(3) == 0 {
        return None;
    }
    let mut v: Vec<Vec<f32>> = n.specs().iter().map(|s| spec_values(b, s).unwrap_or_else(|| b.f32s(s.view().param().numel()))).collect();
    if b.below(16) == 0 {
        v.pop();
    }
    Some(v)
}

fn refs(v: &Option<Vec<Vec<f32>>>) -> Option<Vec<&[f32]>> {
    v.as_ref().map(|l| l.iter().map(|x| x.as_slice()).collect())
}

fn hard_by<'a>(b: &mut Bytes, t: &'a [f32]) -> HardBy<'a> {
    match b.below(3) {
        0 => HardBy::Nnz(b.below(12)),
        1 => HardBy::Sparsity(b.f64()),
        _ => HardBy::Thresholds(t),
    }
}

fn spec_ops(b: &mut Bytes, ps: &[Param], s: &BlockSpec) {
    if s.numel() > MAX_WORK || s.view().param().numel() > MAX_WORK {
        return;
    }
    let nb = s.numblk();
    for _ in 0..b.below(6) {
        match b.below(12) {
            0 => {
                let p = [1.0, 2.0, f64::INFINITY, b.f64()][b.below(4)];
                let v = spec_values(b, s);
                let _ = guarded(ps, true, "norms", || s.norms(Norm::from_p(p)?, v.as_deref()));
            }
            1 => {
                let v = spec_values(b, s);
                let _ = guarded(ps, true, "min", || s.min(v.as_deref()));
                let _ = guarded(ps, true, "max", || s.max(v.as_deref()));
            }
            2 => {
                let e = b.f64();
                let _ = guarded(ps, true, "nnz", || s.nnz(e));
            }
            3 => {
                let m = { let n = b.len_near(nb); b.f32s(n) };
                let _ = guarded(ps, false, "apply_multiplier", || s.apply_multiplier(&m));
            }
            4 => {
                let k = { let n = b.len_near(nb); b.u8s(n) };
                let _ = guarded(ps, false, "apply_mask", || s.apply_mask(&k));
            }
            5 => {
                let t = { let n = b.len_near(nb); b.f32s(n) };
                let v = spec_values(b, s);
                let _ = guarded(ps, false, "hard_threshold", || s.hard_threshold(&t, v.as_deref()));
            }
            6 => {
                let t = { let n = b.len_near(nb); b.f32s(n) };
                let c = spec_values(b, s);
                let o = opts(b);
                let _ = guarded(ps, false, "soft_threshold", || s.soft_threshold(&t, c.as_deref(), o));
            }
            7 => {
                let k = { let n = b.len_near(nb); b.u8s(n) };
                let _ = guarded(ps, true, "get_masks", || s.get_masks(&k));
            }
            8 => {
                let v = spec_values(b, s);
                let (r, m) = (b.bool(), b.bool());
                let _ = guarded(ps, true, "block_view", || s.block_view(v.as_deref(), r, m));
            }
            9 => {
                let blk = b.dims(4);
                let n = b.below(40);
                let m = b.f32s(n);
                let _ = guarded(ps, false, "View.apply_multiplier", || s.view().apply_multiplier(&m, &blk));
                let k = b.u8s(n);
                let _ = guarded(ps, false, "View.apply_mask", || s.view().apply_mask(&k, &blk));
            }
            10 => {
                let n = b.below(12);
                let idx: Vec<i64> = (0..n).map(|_| b.dim()).collect();
                let _ = guarded(ps, true, "linear_offset", || s.view().linear_offset(&idx));
                let _ = guarded(ps, true, "to_param_rc", || s.view().to_param_rc(&idx));
                let _ = guarded(ps, true, "values", || s.view().values());
            }
            _ => {
                let _ = guarded(ps, true, "aliases", || Ok(s.view().aliases()));
            }
        }
    }
}

fn coupling_ops(b: &mut Bytes, ps: &[Param], c: &BlockCoupling) {
    if c.numel() > MAX_WORK || c.specs().iter().any(|s| s.view().param().numel() > MAX_WORK) {
        return;
    }
    let node = BlockNode::Coupling(c.clone());
    let nb = c.numblk();
    for _ in 0..b.below(5) {
        match b.below(8) {
            0 => {
                let v = node_values(b, &node);
                let p = [1.0, 2.0, f64::INFINITY][b.below(3)];
                let _ = guarded(ps, true, "coupling norms", || c.norms(Norm::from_p(p)?, refs(&v).as_deref()));
                let _ = guarded(ps, true, "coupling min", || c.min(refs(&v).as_deref()));
            }
            1 => {
                let m = { let n = b.len_near(nb); b.f32s(n) };
                let _ = guarded(ps, false, "coupling apply_multiplier", || c.apply_multiplier(&m));
            }
            2 => {
                let k = { let n = b.len_near(nb); b.u8s(n) };
                let _ = guarded(ps, false, "coupling apply_mask", || c.apply_mask(&k));
            }
            3 => {
                let t = { let n = b.len_near(nb); b.f32s(n) };
                let v = node_values(b, &node);
                let _ = guarded(ps, false, "coupling hard_threshold", || c.hard_threshold(&t, refs(&v).as_deref()));
            }
            4 => {
                let t = { let n = b.len_near(nb); b.f32s(n) };
                let v = node_values(b, &node);
                let o = opts(b);
                let _ = guarded(ps, false, "coupling soft_threshold", || c.soft_threshold(&t, refs(&v).as_deref(), o));
            }
            5 => {
                let k = { let n = b.len_near(nb); b.u8s(n) };
                let _ = guarded(ps, true, "coupling get_masks", || c.get_masks(&k));
            }
            6 => {
                let v = node_values(b, &node);
                let _ = guarded(ps, true, "coupling block_view", || c.block_view(refs(&v).as_deref()));
            }
            _ => {
                let _ = guarded(ps, true, "coupling nnz", || c.nnz(1e-8));
            }
        }
    }
}

fn scope_ops(b: &mut Bytes, ps: &[Param], s: &ScopeSpec) {
    if s.block().specs().iter().any(|x| x.numel() > MAX_WORK || x.view().param().numel() > MAX_WORK) {
        return;
    }
    let nblk = s.block().numblk();
    let ng = s.num_scopes();
    for _ in 0..b.below(6) {
        match b.below(8) {
            0 => {
                let v = node_values(b, s.block());
                let _ = guarded(ps, true, "block_norms", || s.block_norms(refs(&v).as_deref()));
            }
            1 => {
                let x = b.f64();
                let _ = guarded(ps, true, "sparsity_to_nnz", || s.sparsity_to_nnz(x));
            }
            2 => {
                let sc = { let n = b.len_near(nblk); b.f32s(n) };
                let k = b.below(10);
                let _ = guarded(ps, true, "kth_largest", || s.kth_largest(&sc, k));
                let w = if b.bool() { None } else { Some(b.f64()) };
                let _ = guarded(ps, true, "kth_mid", || s.kth_mid(&sc, k, w));
                let _ = guarded(ps, true, "topk_mask", || s.topk_mask(&sc, k));
            }
            3 | 4 => {
                let t = { let n = b.len_near(ng); b.f32s(n) };
                let by = hard_by(b, &t);
                let v = node_values(b, s.block());
                let _ = guarded(ps, false, "scope hard_threshold", || s.hard_threshold(by, refs(&v).as_deref()));
            }
            5 => {
                let k = b.below(10);
                let v = node_values(b, s.block());
                let sc = if b.bool() { None } else { Some({ let n = b.len_near(nblk); b.f32s(n) }) };
                let _ = guarded(ps, true, "scope get_masks", || s.get_masks(k, refs(&v).as_deref(), sc.as_deref()));
            }
            6 => {
                let t = { let n = b.len_near(ng); b.f32s(n) };
                let c = node_values(b, s.block());
                let (scale, o) = (b.bool(), opts(b));
                let _ = guarded(ps, false, "scope soft_threshold", || s.soft_threshold(&t, refs(&c).as_deref(), scale, o));
            }
            _ => {
                let k = { let n = b.len_near(nblk); b.u8s(n) };
                let _ = guarded(ps, true, "masks_from_block_mask", || s.masks_from_block_mask(&k));
            }
        }
    }
}

fn scope_coupling_ops(b: &mut Bytes, ps: &[Param], c: &ScopeCoupling) {
    if c.scopes().iter().flat_map(|s| s.block().specs()).any(|x| x.numel() > MAX_WORK || x.view().param().numel() > MAX_WORK) {
        return;
    }
    let ng = c.num_scopes();
    for _ in 0..b.below(5) {
        let vals: Option<Vec<Option<Vec<Vec<f32>>>>> =
            if b.bool() { None } else { Some(c.scopes().iter().map(|s| node_values(b, s.block())).collect()) };
        // Missing per-scope entries become the weights' length (a coupling needs all of them).
        let owned: Option<Vec<Vec<Vec<f32>>>> = vals.map(|v| {
            v.into_iter()
                .zip(c.scopes())
                .map(|(x, s)| x.unwrap_or_else(|| s.block().specs().iter().map(|sp| vec![1.0; sp.view().param().numel()]).collect()))
                .collect()
        });
        let mid: Option<Vec<Vec<&[f32]>>> = owned.as_ref().map(|o| o.iter().map(|s| s.iter().map(|x| x.as_slice()).collect()).collect());
        let top: Option<Vec<&[&[f32]]>> = mid.as_ref().map(|m| m.iter().map(|s| s.as_slice()).collect());
        let cv = top.as_deref();
        match b.below(4) {
            0 => {
                let _ = guarded(ps, true, "sc block_norms", || c.block_norms(cv));
            }
            1 => {
                let t = { let n = b.len_near(ng); b.f32s(n) };
                let by = hard_by(b, &t);
                let _ = guarded(ps, false, "sc hard_threshold", || c.hard_threshold(by, cv, &mut |_, _| {}));
            }
            2 => {
                let t = { let n = b.len_near(ng); b.f32s(n) };
                let by = hard_by(b, &t);
                let _ = guarded(ps, true, "sc get_masks", || c.get_masks(by, cv, &mut |_, _| {}));
            }
            _ => {
                let t = { let n = b.len_near(ng); b.f32s(n) };
                let (scale, o) = (b.bool(), opts(b));
                let _ = guarded(ps, false, "sc soft_threshold", || c.soft_threshold(&t, cv, scale, o, &mut |_, _| {}));
            }
        }
    }
}

fn free_functions(b: &mut Bytes) {
    let shape: Vec<usize> = b.dims(3).iter().map(|&d| (d as usize) % 9).collect();
    let n: usize = shape.iter().product();
    let t = { let k = b.len_near(n); b.f32s(k) };
    let blk = b.dims(3);
    let _ = view::block_view_of(&t, &shape, &blk, b.bool(), b.bool());
    let grid: Vec<usize> = b.dims(3).iter().map(|&d| d as usize).collect();
    let bl: Vec<usize> = b.dims(3).iter().map(|&d| d as usize).collect();
    let gn = grid.iter().try_fold(1usize, |a, &x| a.checked_mul(x)).unwrap_or(usize::MAX);
    // The element count (grid x block) is legitimately allocated: keep it small natively (the
    // overflow paths are still reached when the product does not fit in usize).
    let en = grid.iter().chain(&bl).try_fold(1usize, |a, &x| a.checked_mul(x.max(1)));
    if gn <= MAX_WORK && en.map_or(true, |e| e <= 16 * MAX_WORK) {
        let v = { let k = b.len_near(gn); b.f32s(k) };
        let _ = view::broadcast_block_to_element(&v, &grid, &bl, b.bool());
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    // Params: up to 2, small, with arbitrary values (NaN, ±Inf included).
    let mut ps = Vec::new();
    for _ in 0..1 + b.below(2) {
        let shape: Vec<usize> = (0..b.below(4)).map(|_| b.below(7)).collect();
        let n: usize = shape.iter().product();
        let len = b.len_near(n);
        let d = b.f32s(len);
        if let Ok(p) = Param::new(d, &shape) {
            ps.push(p);
        }
    }
    if ps.is_empty() {
        free_functions(&mut b);
        return;
    }
    // Block specs over views (constructed, or the full view).
    let mut specs = Vec::new();
    for _ in 0..1 + b.below(3) {
        let p = &ps[b.below(ps.len())];
        let v = if b.below(3) == 0 {
            Ok(View::from_param(p))
        } else {
            let r = b.below(5);
            let shape: Vec<i64> = (0..r).map(|_| b.dim()).collect();
            let stride: Vec<i64> = (0..r + usize::from(b.below(20) == 0)).map(|_| b.dim()).collect();
            View::new(p, &shape, &stride)
        };
        let Ok(v) = v else { continue };
        let blk = b.dims(5);
        if let Ok(s) = BlockSpec::new(v, &blk, None) {
            spec_ops(&mut b, &ps, &s);
            // Scopes and couplings allocate per-block index maps at construction: natively a
            // huge (stride-0) grid would just be slow; huge allocations are the JS test's job.
            if s.numblk() <= 1 << 16 {
                specs.push(s);
            }
        }
    }
    free_functions(&mut b);
    if specs.is_empty() {
        return;
    }
    // A coupling of some of the specs, with arbitrary orders.
    let mut nodes: Vec<BlockNode> = specs.iter().cloned().map(BlockNode::Spec).collect();
    let k = 1 + b.below(specs.len());
    let chosen: Vec<BlockSpec> = (0..k).map(|_| specs[b.below(specs.len())].clone()).collect();
    let orders: Vec<Vec<i64>> = if b.bool() { vec![] } else { (0..k + usize::from(b.below(20) == 0)).map(|_| b.dims(4)).collect() };
    if let Ok(c) = BlockCoupling::new(chosen, &orders, None) {
        coupling_ops(&mut b, &ps, &c);
        nodes.push(BlockNode::Coupling(c));
    }
    // Scopes over specs / the coupling, and a scope coupling of some of them.
    let mut scopes = Vec::new();
    for _ in 0..1 + b.below(3) {
        let node = nodes[b.below(nodes.len())].clone();
        let sh = b.dims(4);
        if let Ok(s) = ScopeSpec::new(node, &sh, None) {
            scope_ops(&mut b, &ps, &s);
            scopes.push(s);
        }
    }
    if scopes.is_empty() {
        return;
    }
    let k = 1 + b.below(scopes.len());
    let chosen: Vec<ScopeSpec> = (0..k).map(|_| scopes[b.below(scopes.len())].clone()).collect();
    let orders: Vec<Vec<i64>> = if b.bool() { vec![] } else { (0..k).map(|_| b.dims(4)).collect() };
    if let Ok(c) = ScopeCoupling::new(chosen, &orders, None) {
        scope_coupling_ops(&mut b, &ps, &c);
    }
});
