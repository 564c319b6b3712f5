//! The CLI's one error type: a one-line message, printed as `rdma-lb: MESSAGE` with exit
//! status 2.

/// A CLI failure: one line, exit status 2.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}
