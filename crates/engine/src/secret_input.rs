//! `type_secret`: a named secret typed into a password field on the desktop, by element token
//! or by point, never through the clipboard and never read back.
//!
//! Order of the checks: the name must resolve (`SECRET_UNKNOWN`), the target's window must lie
//! in the secret's scope (`SECRET_OUT_OF_SCOPE`), the target must be a password field unless
//! the scope says `anyField` (`SECRET_NOT_PASSWORD_FIELD`), then the usual gates (Esc, the
//! blocklist, approval — also when the scope alone asks for it — and dry run). The effect is
//! judged by the field's mask count (how many characters it holds, never what they are): the
//! outcome says whether the field was filled, and never the value or its length.

use std::time::{Duration, Instant};

use deskpilot_backend::Button;
use deskpilot_types::{ErrorCode, Key, Point, WindowInfo};

use crate::element::{Target, enabled_now, label};
use crate::error::Error;
use crate::guard::{Mutation, SecretAnswer, SecretRequest};
use crate::pointer::PointerTarget;
use crate::secrets::SecretSource;
use crate::session::Session;
use crate::snapshots::{Element, ElementRef};

/// Where `type_secret` types.
#[derive(Debug, Clone)]
pub enum SecretTarget {
    /// An element token from a tree or `find_elements`.
    Element(ElementRef),
    /// A point (image or physical coordinates, as pointer tools take them): clicked first,
    /// and it must lie on a password field.
    Point(PointerTarget),
    /// The one password field of a window (read fresh): the drop-in profiles' default, whose
    /// systems name no element by token.
    PasswordFieldOf(crate::window::WindowRef),
}

/// How the field looked after typing, judged without reading the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretEffect {
    /// The field holds as many characters as the secret has (it was replaced whole).
    Filled,
    /// The field's content changed, but its mask count is not the secret's (an app that
    /// limits, formats or appends).
    Changed,
    /// Nothing could be read back (a point target, a terminal, an app without a text
    /// interface).
    Unverifiable,
}

impl SecretEffect {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretEffect::Filled => "filled",
            SecretEffect::Changed => "changed",
            SecretEffect::Unverifiable => "unverifiable",
        }
    }
}

/// What `type_secret` did: the secret's name and where it went, never the value.
#[derive(Debug, Clone)]
pub struct SecretTyped {
    pub name: String,
    pub source: SecretSource,
    pub window: WindowInfo,
    /// The field, when the target was an element: token, role and name.
    pub element: Option<(String, String, String)>,
    /// Whether the field is a password field (false only with `anyField`).
    pub password_field: bool,
    pub effect: SecretEffect,
    /// Who let it through: "no approval required" or "approved by the person".
    pub approval: &'static str,
}

impl crate::action::Outcome for SecretTyped {
    fn route(&self) -> crate::action::Route {
        crate::action::Route::Input
    }

    fn judged(&self) -> Option<(crate::action::Effect, &'static str)> {
        match self.effect {
            SecretEffect::Filled => Some((
                crate::action::Effect::Confirmed,
                "the field holds as many characters as the secret (its mask count; the value is never read)",
            )),
            SecretEffect::Changed => Some((
                crate::action::Effect::Confirmed,
                "the field's mask count changed (the value is never read)",
            )),
            SecretEffect::Unverifiable => None,
        }
    }
}

/// How long the person has to type a secret on deskpilot's page.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a field is watched for its mask count to change.
const SETTLE: Duration = Duration::from_millis(800);

impl Session {
    /// Types the secret `name` into `target` (see the module documentation).
    pub fn type_secret(&self, name: &str, target: SecretTarget) -> Result<SecretTyped, Error> {
        let store = self.secrets();
        let known = self.known_secret(name)?;
        let scope = store.scope(name);
        self.check_stop(&format!("type secret {name}"))?;
        let target = match target {
            SecretTarget::PasswordFieldOf(window) => {
                SecretTarget::Element(self.password_field_of(window)?.into())
            }
            other => other,
        };
        match target {
            SecretTarget::PasswordFieldOf(_) => unreachable!("resolved above"),
            SecretTarget::Element(r) => {
                let Target {
                    seen, now, element, ..
                } = self.live_element(&r)?;
                in_scope(name, &scope, &now)?;
                if !element.states.protected && !scope.any_field {
                    return Err(not_password(name, &describe(&element, &now)));
                }
                enabled_now(&element)?;
                let source = self.secret_or_ask(name, known, &describe(&element, &now))?;
                let approval = self.secret_gate(
                    &scope,
                    &label(&format!("type secret {name} into"), &element, &now),
                )?;
                let accessibility = &self.desktop().accessibility;
                let before = mask_count(self, &element);
                if !self.focus_for_keys(&seen, &now, &element)? {
                    return Err(Error::Coded {
                        code: ErrorCode::ValueNotSet,
                        message: format!(
                            "{} did not take the keyboard focus, so nothing was typed. Hint: \
                             click the field first, then call type_secret with x/y.",
                            describe(&element, &now)
                        ),
                    });
                }
                self.send_chord(&[Key::Ctrl, Key::Char('a')])?;
                let chars = store.with_value(name, |value| {
                    self.desktop().keyboard.type_text(value)?;
                    Ok(value.chars().count())
                })?;
                let effect = match before {
                    None => SecretEffect::Unverifiable,
                    Some(before) => {
                        let read = || {
                            accessibility
                                .read_text(&element.handle)
                                .ok()
                                .map(|t| t.chars().count())
                        };
                        let wait = SETTLE + Duration::from_millis(10) * chars as u32;
                        settled(read, before, chars, wait).ok_or_else(|| Error::Coded {
                            code: ErrorCode::ValueNotSet,
                            message: format!(
                                "typed secret {name} into {}, but the field did not change: it \
                                 may not have taken the keyboard focus. Hint: look at the \
                                 window, click the field, and try again.",
                                describe(&element, &now)
                            ),
                        })?
                    }
                };
                self.note_secret(name, effect, approval);
                Ok(SecretTyped {
                    name: name.to_string(),
                    source,
                    window: now,
                    element: Some((
                        element.token.clone(),
                        element.role.to_string(),
                        element.name.clone(),
                    )),
                    password_field: element.states.protected,
                    effect,
                    approval,
                })
            }
            SecretTarget::Point(target) => {
                let checked = self
                    .check_points(&[target], crate::HitTestMode::Fail)?
                    .remove(0);
                let point = checked.point;
                let Some(window) = checked.window.clone() else {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "no window at ({}, {}): a secret is typed into a field of a window",
                            point.x, point.y
                        ),
                    });
                };
                in_scope(name, &scope, &window)?;
                let password_field = self.password_field_at(&window, point)?;
                if !password_field && !scope.any_field {
                    return Err(not_password(
                        name,
                        &format!("the point ({}, {}) in {}", point.x, point.y, window.label()),
                    ));
                }
                let source = self.secret_or_ask(
                    name,
                    known,
                    &format!(
                        "the field at ({}, {}) in {}",
                        point.x,
                        point.y,
                        window.label()
                    ),
                )?;
                let approval = self.secret_gate(
                    &scope,
                    &format!(
                        "type secret {name} at ({}, {}) on {}",
                        point.x,
                        point.y,
                        window.label()
                    ),
                )?;
                self.move_with_receipt(point)?;
                self.desktop().pointer.button(Button::Left, true)?;
                self.desktop().pointer.button(Button::Left, false)?;
                self.activate_for_keys(&window)?;
                store.with_value(name, |value| {
                    self.desktop().keyboard.type_text(value)?;
                    Ok(())
                })?;
                self.note_secret(name, SecretEffect::Unverifiable, approval);
                Ok(SecretTyped {
                    name: name.to_string(),
                    source,
                    window,
                    element: None,
                    password_field,
                    effect: SecretEffect::Unverifiable,
                    approval,
                })
            }
        }
    }

    /// The token of the one password field showing in `window`: none and several are refused
    /// with what the window holds.
    fn password_field_of(&self, window: crate::window::WindowRef) -> Result<String, Error> {
        let snapshot = self.window_state(&crate::tree::TreeRequest {
            max_elements: 2000,
            ..crate::tree::TreeRequest::new(window)
        })?;
        let fields: Vec<&Element> = snapshot
            .elements
            .iter()
            .filter(|e| e.states.protected)
            .collect();
        match fields.as_slice() {
            [one] => Ok(one.token.clone()),
            [] => Err(Error::Coded {
                code: ErrorCode::SecretNotPasswordField,
                message: format!(
                    "{} shows no password field. Hint: open the sign-in form first, or name the \
                     field (a token, an index, or x/y).",
                    snapshot.window.label()
                ),
            }),
            many => Err(Error::Coded {
                code: ErrorCode::AmbiguousElement,
                message: format!(
                    "{} shows {} password fields ({}); name the one to type into.",
                    snapshot.window.label(),
                    many.len(),
                    many.iter()
                        .map(|e| format!("{} \"{}\"", e.token, e.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }

    /// Where secret `name`'s value comes from, `None` when it is known nowhere yet (the person
    /// may still be asked, once the target passed its checks: [`Session::secret_or_ask`]).
    pub(crate) fn known_secret(&self, name: &str) -> Result<Option<SecretSource>, Error> {
        match self.secrets().resolve(name) {
            Ok(source) => Ok(Some(source)),
            Err(e) if e.code() == ErrorCode::SecretUnknown => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `known`, or the value the person types on deskpilot's own page (URL-mode elicitation
    /// through the client), kept for the session — and in the desktop keyring when the person
    /// ticks that. `purpose` says where it will go.
    pub(crate) fn secret_or_ask(
        &self,
        name: &str,
        known: Option<SecretSource>,
        purpose: &str,
    ) -> Result<SecretSource, Error> {
        if let Some(source) = known {
            return Ok(source);
        }
        let store = self.secrets();
        let unknown = |why: &str| {
            let e = store.unknown(name);
            Error::Coded {
                code: ErrorCode::SecretUnknown,
                message: format!("{e} The person could not be asked: {why}."),
            }
        };
        let Some(approver) = self.approver() else {
            return Err(unknown("no client is connected that could ask"));
        };
        let request = SecretRequest {
            name: name.to_string(),
            purpose: purpose.to_string(),
        };
        self.check_stop(&format!("ask for secret {name}"))?;
        match approver.ask_secret(&request, ASK_TIMEOUT) {
            SecretAnswer::Given { value, keep } => {
                if keep && let Err(e) = crate::keyring::store(name, &value) {
                    tracing::warn!(
                        secret = name,
                        "keeping the secret in the keyring failed: {e}"
                    );
                }
                store.insert(name, value, SecretSource::Person)?;
                Ok(SecretSource::Person)
            }
            SecretAnswer::Declined(why) => Err(Error::Coded {
                code: ErrorCode::SecretUnknown,
                message: format!(
                    "the person did not give secret {name} ({why}); nothing was typed. Hint: \
                     ask them whether to go on, or use another way to sign in."
                ),
            }),
            SecretAnswer::Unavailable(why) => Err(unknown(&why)),
        }
    }

    /// The gates of a mutating action, with the approval the secret's scope may add.
    fn secret_gate(
        &self,
        scope: &crate::secrets::SecretScope,
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

    /// Whether `point` lies on a password field of `window`, as the accessibility backend
    /// finds them (an application that does not answer in a second counts as none).
    fn password_field_at(&self, window: &WindowInfo, point: Point) -> Result<bool, Error> {
        let found = self.desktop().accessibility.password_fields(
            std::slice::from_ref(window),
            Instant::now() + Duration::from_secs(1),
        )?;
        Ok(found
            .fields
            .iter()
            .any(|f| f.window == window.id && f.bounds.contains(point)))
    }
}

/// How long a mask count must hold still to count as settled: keys still on their way change it.
const QUIET: Duration = Duration::from_millis(150);

/// How a field's mask count (`read`) settled after `chars` characters were typed over a field
/// that held `before`: `None` when it never changed. A count already equal to the secret's
/// before typing is believed only once it moved, or at the deadline (regression: the field
/// still showed the previous value's count before ctrl+a arrived, the call answered "filled"
/// while keys were still on their way, and the next action cut the value short).
fn settled(
    mut read: impl FnMut() -> Option<usize>,
    before: usize,
    chars: usize,
    wait: Duration,
) -> Option<SecretEffect> {
    let deadline = Instant::now() + wait;
    let mut moved = false;
    let mut last: Option<(usize, Instant)> = None;
    loop {
        let Some(n) = read() else {
            return Some(SecretEffect::Unverifiable);
        };
        moved |= n != before;
        let since = match last {
            Some((m, at)) if m == n => at,
            _ => {
                let at = Instant::now();
                last = Some((n, at));
                at
            }
        };
        let quiet = since.elapsed() >= QUIET;
        let late = Instant::now() >= deadline;
        if n == chars && quiet && (moved || late) {
            return Some(SecretEffect::Filled);
        }
        if late {
            return (moved && n > 0).then_some(SecretEffect::Changed);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How many characters the field holds now (its mask count), when it can be read.
fn mask_count(s: &Session, element: &Element) -> Option<usize> {
    s.desktop()
        .accessibility
        .read_text(&element.handle)
        .ok()
        .map(|t| t.chars().count())
}

/// `Edit "Password" (s3:7) in "Sign in" (zenity, pid 42)`.
fn describe(element: &Element, window: &WindowInfo) -> String {
    format!(
        "{} \"{}\" ({}) in {}",
        element.role,
        element.name,
        element.token,
        window.label()
    )
}

fn in_scope(
    name: &str,
    scope: &crate::secrets::SecretScope,
    window: &WindowInfo,
) -> Result<(), Error> {
    if scope.allows_window(window) {
        return Ok(());
    }
    Err(Error::Coded {
        code: ErrorCode::SecretOutOfScope,
        message: format!(
            "secret {name} may be typed only into {}; the target is in {}. Hint: bring up the \
             window the secret is for, or ask the operator to widen [secrets.{name}] windows.",
            scope.describe(),
            window.label()
        ),
    })
}

fn not_password(name: &str, target: &str) -> Error {
    Error::Coded {
        code: ErrorCode::SecretNotPasswordField,
        message: format!(
            "{target} is not a password field, and secret {name} goes only into password \
             fields. Hint: target the password field (its tree line says password); if this \
             field really should take it (a terminal prompt), the operator sets anyField = true \
             in [secrets.{name}]."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field whose count follows `steps` (each for its duration), then stays at the last.
    fn field(steps: &[(usize, u64)]) -> impl FnMut() -> Option<usize> {
        let start = Instant::now();
        let steps = steps.to_vec();
        move || {
            let mut at = 0;
            for (n, ms) in &steps {
                at += ms;
                if start.elapsed() < Duration::from_millis(at) {
                    return Some(*n);
                }
            }
            steps.last().map(|(n, _)| *n)
        }
    }

    #[test]
    fn a_count_equal_before_typing_is_not_believed_until_it_moved() {
        // The old value had as many characters; ctrl+a and the keys arrive 100 ms later.
        let started = Instant::now();
        let got = settled(
            field(&[(12, 100), (1, 30), (8, 30), (12, 10)]),
            12,
            12,
            Duration::from_secs(2),
        );
        assert_eq!(got, Some(SecretEffect::Filled));
        assert!(started.elapsed() >= Duration::from_millis(150 + 160));
    }

    #[test]
    fn an_empty_field_filled_settles_and_one_that_never_moves_is_none() {
        let got = settled(
            field(&[(0, 30), (5, 20), (12, 10)]),
            0,
            12,
            Duration::from_secs(2),
        );
        assert_eq!(got, Some(SecretEffect::Filled));
        let got = settled(field(&[(0, 10)]), 0, 12, Duration::from_millis(300));
        assert_eq!(got, None);
        let got = settled(
            field(&[(0, 20), (9, 10)]),
            0,
            12,
            Duration::from_millis(300),
        );
        assert_eq!(got, Some(SecretEffect::Changed));
        assert_eq!(
            settled(|| None, 0, 12, Duration::from_millis(300)),
            Some(SecretEffect::Unverifiable)
        );
    }
}
