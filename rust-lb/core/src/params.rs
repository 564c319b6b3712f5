//! Reading an algorithm's parameter text (`key = value, ...`, the body of a TOML inline table)
//! into its typed parameters, with errors that name the algorithm and the key at fault.

use serde::de::DeserializeOwned;

use crate::error::ConfigError;

/// A parameter table as read, before it is decoded into a scheme's type.
pub(crate) type Table = toml::Table;

/// Reads `key = value, ...` (commas or newlines between pairs) into a TOML table;
/// `algorithm` names the scheme in errors.
pub(crate) fn parse_table(algorithm: &str, params: &str) -> Result<Table, ConfigError> {
    let text = params.trim();
    if text.is_empty() {
        return Ok(Table::new());
    }
    let unreadable = |why: String| ConfigError {
        algorithm: algorithm.to_owned(),
        parameter: None,
        message: format!("cannot read parameters `{text}`{why}"),
    };
    let wrapped = format!("p = {{ {} }}", text.replace('\n', ", "));
    let mut outer: Table = wrapped
        .parse()
        .map_err(|e: toml::de::Error| unreadable(format!(": {}", e.message())))?;
    match outer.remove("p") {
        Some(toml::Value::Table(t)) => Ok(t),
        _ => Err(unreadable(String::new())),
    }
}

/// Decodes a parameter table into a scheme's typed parameters, naming the key at fault.
pub(crate) fn decode<T: DeserializeOwned>(algorithm: &str, table: Table) -> Result<T, ConfigError> {
    let whole = toml::Value::Table(table.clone()).try_into::<T>();
    whole.map_err(|e: toml::de::Error| {
        // Parameter structs default every field, so a key that fails on its own is the culprit.
        let parameter = table.iter().find_map(|(k, v)| {
            let mut alone = Table::new();
            alone.insert(k.clone(), v.clone());
            toml::Value::Table(alone)
                .try_into::<T>()
                .is_err()
                .then(|| k.clone())
        });
        ConfigError {
            algorithm: algorithm.to_owned(),
            parameter,
            message: e.message().to_owned(),
        }
    })
}
