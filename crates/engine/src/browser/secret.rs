//! A named secret typed into a page's field (`browser_type` / `browser_fill` with `secret`),
//! the browser route of `type_secret`: the value goes only into the page, never back.
//!
//! Order of the checks, as on the desktop: the name must resolve (`SECRET_UNKNOWN`); the
//! field's document and every document it is framed in must be of an origin the secret's
//! scope allows (`SECRET_OUT_OF_SCOPE`); the field must be an `<input type=password>` unless
//! the scope says `anyField` (`SECRET_NOT_PASSWORD_FIELD`); then the gates (Esc, the
//! blocklist, approval — also when the scope alone asks for it — and dry run). The field is
//! focused and emptied (select all, Backspace), the value goes in by `Input.insertText` (never
//! the clipboard), and the effect is judged by one boolean the page computes: the field holds
//! something (`value.length > 0`). Neither the value nor its length crosses back from the
//! page; results, errors and the timeline name the secret and the field only.
//!
//! Not done: the value's copies on their way to the browser (the protocol message, the socket
//! buffer) are freed, not zeroed.

use deskpilot_browser::cdp::Connection;
use deskpilot_browser::dom;
use deskpilot_browser::input::{self, Key};
use deskpilot_browser::snapshot::Target;
use deskpilot_types::ErrorCode;

use super::effects::{SETTLE, dialog_after};
use super::{BrowserOutcome, PageInfo, coded, unavailable};
use crate::secret_input::SecretEffect;
use crate::secrets::SecretScope;
use crate::{error::Error, safety::Mutation, session::Session};

/// `textbox "Password" [ref=e12]`.
pub(super) fn field_words(t: &Target) -> String {
    format!("{} \"{}\" [ref={}]", t.role, t.name, t.r#ref)
}

/// Checks that secret `name` (whose scope is `scope`) may go into the field `t` names: its
/// origins in scope, a password field unless `anyField`, a field that takes typing.
pub(super) fn check_target(
    cdp: &Connection,
    session: &str,
    info: &PageInfo,
    t: &Target,
    name: &str,
    scope: &SecretScope,
) -> Result<(), Error> {
    let field = dom::secret_field(cdp, session, t.backend)
        .map_err(unavailable)?
        .ok_or_else(|| Error::StaleElement {
            token: t.r#ref.clone(),
            why: "the element is gone from the page; take browser_snapshot again".into(),
        })?;
    let what = field_words(t);
    let outside = if field.origins.is_empty() {
        // A document whose origin cannot be read is in no scope that names origins.
        scope
            .origins
            .as_ref()
            .map(|_| "an origin it does not say".to_string())
    } else {
        field
            .origins
            .iter()
            .find(|o| !scope.allows_origin(o))
            .cloned()
    };
    if let Some(origin) = outside {
        let framed = if field.origins.len() > 1 {
            format!(
                " (the field's document is {}, framed in {})",
                field.origins[0],
                field.origins[1..].join(" in ")
            )
        } else {
            String::new()
        };
        return Err(coded(
            ErrorCode::SecretOutOfScope,
            format!(
                "secret {name} may be typed only into pages of {}; {what} is on {origin}{framed}, \
                 page \"{}\" ({}). Nothing was typed. Hint: open the site the secret is for, or \
                 ask the operator to widen [secrets.{name}] origins.",
                scope.describe(),
                info.title,
                info.url
            ),
        ));
    }
    if !field.password && !scope.any_field {
        return Err(coded(
            ErrorCode::SecretNotPasswordField,
            format!(
                "{what} on \"{}\" is not a password field (<input type=password>), and secret \
                 {name} goes only into password fields. Nothing was typed. Hint: use the ref of \
                 the field browser_snapshot marks [password]; if this field really should take \
                 it, the operator sets anyField = true in [secrets.{name}].",
                info.title
            ),
        ));
    }
    if !field.typable {
        return Err(Error::InvalidArgument {
            message: format!(
                "{what} takes no typed text (a button, box or picker): a secret is typed into \
                 a text or password field"
            ),
        });
    }
    if field.disabled || field.readonly {
        return Err(coded(
            ErrorCode::ElementDisabled,
            format!(
                "{what} is {} now: nothing was typed. Hint: do what enables it first.",
                if field.disabled {
                    "disabled"
                } else {
                    "read-only"
                }
            ),
        ));
    }
    Ok(())
}

impl Session {
    /// Types secret `name` into the field `r` names (see the module documentation),
    /// pressing Enter after it when `submit`.
    pub fn browser_type_secret(
        &self,
        r: &str,
        name: &str,
        submit: bool,
    ) -> Result<BrowserOutcome, Error> {
        let store = self.secrets();
        let known = self.known_secret(name)?;
        let scope = store.scope(name);
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        check_target(&cdp, &session, &info, &t, name, &scope)?;
        // A name nobody configured is asked of the person once the target passed its checks.
        self.secret_or_ask(
            name,
            known,
            &format!("{} \"{}\" on {}", t.role, t.name, info.url),
        )?;
        let approval = self.browser_secret_gate(
            &scope,
            &format!(
                "type secret {name} into {} \"{}\" in \"{}\" ({})",
                t.role, t.name, info.title, info.url
            ),
        )?;
        let mark = cdp.log_mark(&session);
        self.type_secret_into(&cdp, &session, &t, name)?;
        if submit && let Some(enter) = Key::named("Enter") {
            input::press(&cdp, &session, &enter, 0).map_err(unavailable)?;
        }
        self.note_secret(name, SecretEffect::Filled, approval);
        let mut o = BrowserOutcome {
            detail: format!(
                "typed secret {name} into {} (filled; {approval}){}",
                field_words(&t),
                if submit { ", then pressed Enter" } else { "" }
            ),
            page: info,
            changed: Some(true),
            value: None,
            snapshot: None,
            mutation: true,
        };
        dialog_after(&cdp, &session, mark, &mut o);
        Ok(o)
    }

    /// The gates of typing a secret, asking the person also when its scope wants every use
    /// approved; says who let it through.
    pub(super) fn browser_secret_gate(
        &self,
        scope: &SecretScope,
        label: &str,
    ) -> Result<&'static str, Error> {
        let required = scope.approval || self.config().safety.require_approval;
        self.gate_approving(Mutation::Other, label, scope.approval)?;
        Ok(if required {
            "approved by the person"
        } else {
            "no approval required"
        })
    }

    /// Focuses the field `t` names, empties it, types the secret's value into it and checks
    /// that it now holds something.
    pub(super) fn type_secret_into(
        &self,
        cdp: &Connection,
        session: &str,
        t: &Target,
        name: &str,
    ) -> Result<(), Error> {
        let stale = |e: deskpilot_browser::Error| Error::StaleElement {
            token: t.r#ref.clone(),
            why: format!("the element is gone from the page ({e}); take browser_snapshot again"),
        };
        let not_set = |why: &str| {
            coded(
                ErrorCode::ValueNotSet,
                format!(
                    "secret {name} into {}: {why}. Hint: take browser_snapshot, click the field, \
                     and try again.",
                    field_words(t)
                ),
            )
        };
        dom::focus(cdp, session, t.backend).map_err(stale)?;
        dom::select_all(cdp, session, t.backend).map_err(stale)?;
        if dom::filled(cdp, session, t.backend).map_err(stale)? {
            let key = Key::named("Backspace").expect("a named key");
            input::press(cdp, session, &key, 0).map_err(unavailable)?;
            if dom::filled(cdp, session, t.backend).map_err(stale)? {
                return Err(not_set(
                    "the field could not be emptied first, so nothing was typed",
                ));
            }
        }
        self.secrets().use_value(name, |value| {
            input::insert_text(cdp, session, value).map_err(unavailable)
        })?;
        let deadline = std::time::Instant::now() + SETTLE;
        while !dom::filled(cdp, session, t.backend).map_err(stale)? {
            if std::time::Instant::now() >= deadline {
                return Err(not_set(
                    "it was typed, but the field is still empty (the page may have refused the \
                     input, or the focus moved)",
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        Ok(())
    }
}
