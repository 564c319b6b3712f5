//! rdma-lb's own TOML scenario files (in progress).

use std::path::Path;

use crate::error::{ErrorKind, Result, ScenarioError};
use crate::model::Scenario;
use crate::overrides::Overrides;

/// Loads a TOML scenario.
///
/// # Errors
/// Not yet implemented.
pub fn load_toml_str(path: &Path, _text: &str, _o: &Overrides) -> Result<(Scenario, usize)> {
    Err(ScenarioError::file(
        &path.display().to_string(),
        "toml",
        ErrorKind::Unsupported,
        "TOML scenarios: work in progress",
    ))
}
