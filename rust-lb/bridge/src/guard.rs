//! The guard every bridge entry point runs its Rust code in: a panic never crosses into C++;
//! it becomes an error the caller reports.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, turning a panic into its message.
pub(crate) fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_owned());
        format!("internal error in rdma-lb (caught panic): {msg}")
    })
}
