//! The names of the actions an element advertises, by index (the index `DoAction` takes).
//!
//! One bulk `Action.GetActions` answers for all of them, but toolkits fill it wrongly: Gecko
//! (Firefox, Thunderbird) puts the key binding into every field (`(";;", ";;", ";;")`), and
//! some LibreOffice objects give empty names. When the bulk answer looks like that, the names
//! are read one by one with `GetName(i)` for `NActions` indexes, which every toolkit measured
//! answers right. The tree (`enrich`) and `do_action` both read names here.

use super::*;

/// At most this many actions are read one by one.
const MAX_ACTIONS: i32 = 32;

/// Whether a bulk `GetActions` answer (name, description, key binding) cannot be trusted:
/// every name empty, or names that are key bindings (equal to the binding field, or holding
/// the `;` that separates a binding's variants).
pub(super) fn malformed(actions: &[(&str, &str, &str)]) -> bool {
    !actions.is_empty()
        && (actions.iter().all(|(name, _, _)| name.trim().is_empty())
            || actions.iter().any(|(name, _, binding)| {
                name.contains(';') || (!binding.is_empty() && name == binding)
            }))
}

/// The element's action names, in `DoAction` order (an entry may be empty).
pub(super) async fn action_names(a: &ActionProxy<'_>) -> Result<Vec<String>, Error> {
    let bulk = a.get_actions().await;
    if let Ok(bulk) = &bulk {
        let fields: Vec<(&str, &str, &str)> = bulk
            .iter()
            .map(|x| {
                (
                    x.name.as_str(),
                    x.description.as_str(),
                    x.keybinding.as_str(),
                )
            })
            .collect();
        if !malformed(&fields) {
            return Ok(bulk.iter().map(|x| x.name.clone()).collect());
        }
        tracing::debug!(
            ?fields,
            "bulk GetActions malformed; reading names one by one"
        );
    }
    let n = a.n_actions().await.map_err(dbus_err("NActions"))?;
    let names = join_all((0..n.clamp(0, MAX_ACTIONS)).map(|i| a.get_name(i))).await;
    Ok(names.into_iter().map(Result::unwrap_or_default).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: Firefox ESR 153 and Thunderbird answered `GetActions` with the key binding
    /// in every field, so a link's "jump" was listed as ";;" and `do_action("jump")` failed.
    #[test]
    fn bulk_action_answers_that_are_key_bindings_or_empty_are_not_trusted() {
        // Gecko (recorded): a link and a button.
        assert!(malformed(&[(";;", ";;", ";;")]));
        assert!(malformed(&[("<Alt>f;<Alt>f;", "", "<Alt>f;<Alt>f;")]));
        // LibreOffice objects with empty names.
        assert!(malformed(&[("", "", ""), ("", "", "")]));
        // LibreOffice 7.4 gtk3 (recorded): localized names, right.
        assert!(!malformed(&[("Click", "Clicks the button", "")]));
        assert!(!malformed(&[(
            "Click",
            "Clicks the menuitem",
            "<Alt>f;<Alt>f;"
        )]));
        // GTK: one action with an empty name beside good ones is kept as it is.
        assert!(!malformed(&[("activate", "", ""), ("", "", "")]));
        assert!(!malformed(&[]));
    }
}
