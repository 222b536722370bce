//! The desktop keyring: named secrets read from and stored in the Secret Service (Linux, over
//! D-Bus) or Credential Manager (Windows), for the secret store in [`crate::secrets`].
//!
//! Where a secret lives:
//! - Secret Service: an item with the attributes `service=deskpilot`, `name=NAME`. A person
//!   stores one with `secret-tool store --label='deskpilot NAME' service deskpilot name NAME`.
//! - Credential Manager: a generic credential with the target `deskpilot:NAME` (`cmdkey
//!   /generic:deskpilot:NAME /user:deskpilot /pass`).
//!
//! What it deliberately does not do: keep a connection or cache values (the secret store holds
//! what it read), show prompts (a keyring that needs a person to unlock it is
//! [`KeyringError::Locked`], never a dialog deskpilot waits on), or pick among keyrings.
//!
//! Invariants:
//! - a value never appears in an error, a log line or a panic message; only names do;
//! - one Secret Service operation, connecting included, takes at most 2 s: a hung keyring
//!   costs that much and is then [`KeyringError::Unavailable`] (Credential Manager calls are
//!   local and synchronous);
//! - buffers this module fills with a value are zeroed before they are freed (the D-Bus
//!   message buffers inside zbus and the `String` handed to the caller are not ours to wipe).

/// The Secret Service `service` attribute and the Credential Manager target prefix that mark
/// deskpilot's secrets.
const SERVICE: &str = "deskpilot";

/// Why the keyring gave no answer. Every message names what to do, never a value.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyringError {
    /// No keyring answers: no session bus, no Secret Service on it or no answer from it in
    /// time, or no Credential Manager in this logon session.
    #[error("the desktop keyring is unavailable: {0}")]
    Unavailable(String),
    /// The item or its collection is locked and unlocking it needs a person (a prompt).
    #[cfg_attr(
        not(target_os = "linux"),
        allow(dead_code, reason = "only the Secret Service locks")
    )]
    #[error("the desktop keyring is locked: {0}")]
    Locked(String),
    /// The keyring answered with an error, or the stored value is not text.
    #[error("the desktop keyring failed: {0}")]
    Failed(String),
}

/// The keyring's value of the secret `name`; `None` when it holds no such item.
///
/// # Platform-specific
/// - Linux: the Secret Service on the session bus (`DBUS_SESSION_BUS_ADDRESS`); a locked item
///   is unlocked when that needs no prompt.
/// - Windows: Credential Manager; the blob is read as UTF-16 (what `cmdkey` and the Control
///   Panel write) unless it is NUL-free UTF-8.
/// - Elsewhere: always [`KeyringError::Unavailable`].
pub(crate) fn lookup(name: &str) -> Result<Option<String>, KeyringError> {
    let found = platform::lookup(name);
    match &found {
        Ok(value) => tracing::debug!(secret = name, found = value.is_some(), "keyring lookup"),
        Err(e) => tracing::debug!(secret = name, "keyring lookup: {e}"),
    }
    found
}

/// Creates the secret `name` in the keyring, or replaces its value.
///
/// # Platform-specific
/// - Linux: every item that [`lookup`] could read gets the new value; with none, an item
///   labelled `deskpilot NAME` is created in the default collection.
/// - Windows: a generic credential, persisted on this machine, blob in UTF-16.
/// - Elsewhere: always [`KeyringError::Unavailable`].
pub(crate) fn store(name: &str, value: &str) -> Result<(), KeyringError> {
    let stored = platform::store(name, value);
    match &stored {
        Ok(()) => tracing::debug!(secret = name, "keyring store"),
        Err(e) => tracing::debug!(secret = name, "keyring store: {e}"),
    }
    stored
}

/// Whether a keyring answers now.
///
/// # Platform-specific
/// - Linux: the Secret Service answers on the session bus (starting it if the bus can).
/// - Windows: Credential Manager works in this logon session.
/// - Elsewhere: false.
#[allow(
    dead_code,
    reason = "for the secret store's keep-in-keyring and status (issue 39)"
)]
pub(crate) fn available() -> bool {
    match platform::probe() {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!("{e}");
            false
        }
    }
}

#[cfg(target_os = "linux")]
use secret_service as platform;

#[cfg(windows)]
use credential_manager as platform;

#[cfg(not(any(target_os = "linux", windows)))]
use unsupported as platform;

#[cfg(target_os = "linux")]
mod secret_service {
    //! The freedesktop Secret Service API (org.freedesktop.secrets), spoken with the "plain"
    //! algorithm: the value crosses only the local bus socket, as with libsecret's default.

    use std::collections::HashMap;
    use std::future::Future;
    use std::time::Duration;

    use zbus::Connection;
    use zbus::zvariant::{self, OwnedObjectPath, OwnedValue, Value};
    use zeroize::Zeroize;

    use super::{KeyringError, SERVICE};

    /// How long one operation may take, start to finish (connecting included).
    pub(super) const DEADLINE: Duration = Duration::from_secs(2);

    const DESTINATION: &str = "org.freedesktop.secrets";
    const SERVICE_PATH: &str = "/org/freedesktop/secrets";
    const SERVICE_IFACE: &str = "org.freedesktop.Secret.Service";
    const COLLECTION_IFACE: &str = "org.freedesktop.Secret.Collection";
    const ITEM_IFACE: &str = "org.freedesktop.Secret.Item";
    const PROMPT_IFACE: &str = "org.freedesktop.Secret.Prompt";
    /// The schema libsecret (and so `secret-tool`) records on the items it creates; ours carry
    /// it too, so either tool sees the same kind of item.
    const GENERIC_SCHEMA: &str = "org.freedesktop.Secret.Generic";
    /// The path the API uses for "no object" (no prompt needed, no such alias).
    const NONE: &str = "/";

    /// A secret as the API carries it: session, algorithm parameters, value, content type.
    type Secret = (OwnedObjectPath, Vec<u8>, Vec<u8>, String);

    /// Which bus holds the Secret Service.
    #[derive(Debug, Clone, Copy)]
    pub(super) enum Bus<'a> {
        /// The session bus of this process (`DBUS_SESSION_BUS_ADDRESS`).
        Session,
        /// A bus at this D-Bus address (tests run a private one).
        #[cfg_attr(not(test), expect(dead_code, reason = "tests run a private bus"))]
        Address(&'a str),
    }

    pub(super) fn lookup(name: &str) -> Result<Option<String>, KeyringError> {
        lookup_on(Bus::Session, name)
    }

    pub(super) fn store(name: &str, value: &str) -> Result<(), KeyringError> {
        store_on(Bus::Session, name, value)
    }

    pub(super) fn probe() -> Result<(), KeyringError> {
        probe_on(Bus::Session)
    }

    pub(super) fn lookup_on(bus: Bus<'_>, name: &str) -> Result<Option<String>, KeyringError> {
        within_deadline("lookup", async {
            let c = connect(bus).await?;
            let (unlocked, locked) = search(&c, name).await?;
            let item = match (unlocked.into_iter().next(), locked.first()) {
                (Some(item), _) => item,
                (None, Some(item)) => {
                    unlock(&c, std::slice::from_ref(item), name).await?;
                    item.clone()
                }
                (None, None) => return Ok(None),
            };
            let session = open_session(&c).await?;
            let secrets: HashMap<OwnedObjectPath, Secret> = call(
                &c,
                SERVICE_PATH,
                SERVICE_IFACE,
                "GetSecrets",
                &(std::slice::from_ref(&item), &session),
            )
            .await?;
            let mut found = None;
            for (path, secret) in secrets {
                let (_, mut parameters, mut value, content_type) = secret;
                parameters.zeroize();
                if path == item && found.is_none() {
                    found = Some(text(value, name, &content_type)?);
                } else {
                    value.zeroize();
                }
            }
            found.map(Some).ok_or_else(|| {
                KeyringError::Failed(format!(
                    "the Secret Service returned no value for the item of secret {name}"
                ))
            })
        })
    }

    pub(super) fn store_on(bus: Bus<'_>, name: &str, value: &str) -> Result<(), KeyringError> {
        within_deadline("store", async {
            let c = connect(bus).await?;
            let session = open_session(&c).await?;
            let mut secret: Secret = (
                session,
                Vec::new(),
                value.as_bytes().to_vec(),
                "text/plain".to_owned(),
            );
            let stored = replace_or_create(&c, name, &secret).await;
            secret.2.zeroize();
            stored
        })
    }

    /// Gives every item [`lookup_on`] could read the new value, so no older duplicate is
    /// read later; creates an item in the default collection when there is none. (CreateItem's
    /// own `replace` only replaces an item with exactly the same attributes, which misses
    /// items made by other tools with more attributes.)
    async fn replace_or_create(
        c: &Connection,
        name: &str,
        secret: &Secret,
    ) -> Result<(), KeyringError> {
        let (unlocked, locked) = search(c, name).await?;
        if !locked.is_empty() {
            unlock(c, &locked, name).await?;
        }
        let existing: Vec<OwnedObjectPath> = unlocked.into_iter().chain(locked).collect();
        for item in &existing {
            call::<_, ()>(c, item.as_str(), ITEM_IFACE, "SetSecret", &(secret,)).await?;
        }
        if !existing.is_empty() {
            return Ok(());
        }
        let collection: OwnedObjectPath =
            call(c, SERVICE_PATH, SERVICE_IFACE, "ReadAlias", &("default",)).await?;
        if collection.as_str() == NONE {
            return Err(KeyringError::Failed(
                "the keyring has no default collection to create the item of secret in; create \
                 one (Passwords and Keys, or `secret-tool store`) and retry"
                    .to_owned(),
            ));
        }
        unlock(c, std::slice::from_ref(&collection), name).await?;
        let label = format!("deskpilot {name}");
        let attributes = attributes(name, true);
        let properties: HashMap<&str, Value<'_>> = HashMap::from([
            (
                "org.freedesktop.Secret.Item.Label",
                Value::from(label.as_str()),
            ),
            (
                "org.freedesktop.Secret.Item.Attributes",
                Value::from(attributes),
            ),
        ]);
        let (_item, prompt): (OwnedObjectPath, OwnedObjectPath) = call(
            c,
            collection.as_str(),
            COLLECTION_IFACE,
            "CreateItem",
            &(properties, secret, true),
        )
        .await?;
        if prompt.as_str() != NONE {
            dismiss(c, &prompt).await;
            return Err(locked_error(name));
        }
        Ok(())
    }

    pub(super) fn probe_on(bus: Bus<'_>) -> Result<(), KeyringError> {
        within_deadline("probe", async {
            let c = connect(bus).await?;
            let _: OwnedValue = call(
                &c,
                SERVICE_PATH,
                "org.freedesktop.DBus.Properties",
                "Get",
                &(SERVICE_IFACE, "Collections"),
            )
            .await?;
            Ok(())
        })
    }

    /// Runs `op` to completion or until [`DEADLINE`], whichever comes first; at the deadline
    /// the operation (its connection included) is dropped.
    fn within_deadline<T>(
        what: &str,
        op: impl Future<Output = Result<T, KeyringError>>,
    ) -> Result<T, KeyringError> {
        let deadline = async {
            async_io::Timer::after(DEADLINE).await;
            Err(KeyringError::Unavailable(format!(
                "the Secret Service did not answer a {what} within {} ms; is the keyring \
                 daemon (gnome-keyring-daemon, KeePassXC) hung?",
                DEADLINE.as_millis()
            )))
        };
        async_io::block_on(futures_lite::future::or(op, deadline))
    }

    async fn connect(bus: Bus<'_>) -> Result<Connection, KeyringError> {
        let builder = match bus {
            Bus::Session => zbus::conn::Builder::session(),
            Bus::Address(address) => zbus::conn::Builder::address(address),
        };
        let unreachable = |e: zbus::Error| {
            KeyringError::Unavailable(match bus {
                Bus::Session => format!(
                    "cannot reach the D-Bus session bus ({e}); run deskpilot inside the desktop \
                     session, or set DBUS_SESSION_BUS_ADDRESS to its bus"
                ),
                Bus::Address(address) => format!("cannot reach the D-Bus bus at {address} ({e})"),
            })
        };
        builder
            .map_err(unreachable)?
            .build()
            .await
            .map_err(unreachable)
    }

    fn attributes(name: &str, with_schema: bool) -> HashMap<&str, &str> {
        let mut attributes = HashMap::from([("service", SERVICE), ("name", name)]);
        if with_schema {
            attributes.insert("xdg:schema", GENERIC_SCHEMA);
        }
        attributes
    }

    /// The items of secret `name`: (unlocked, locked).
    async fn search(
        c: &Connection,
        name: &str,
    ) -> Result<(Vec<OwnedObjectPath>, Vec<OwnedObjectPath>), KeyringError> {
        call(
            c,
            SERVICE_PATH,
            SERVICE_IFACE,
            "SearchItems",
            &(attributes(name, false),),
        )
        .await
    }

    async fn open_session(c: &Connection) -> Result<OwnedObjectPath, KeyringError> {
        let (_output, session): (OwnedValue, OwnedObjectPath) = call(
            c,
            SERVICE_PATH,
            SERVICE_IFACE,
            "OpenSession",
            &("plain", Value::from("")),
        )
        .await?;
        Ok(session)
    }

    /// Unlocks `objects` when that needs no prompt; a prompt is dismissed and the answer is
    /// [`KeyringError::Locked`].
    async fn unlock(
        c: &Connection,
        objects: &[OwnedObjectPath],
        name: &str,
    ) -> Result<(), KeyringError> {
        let (_unlocked, prompt): (Vec<OwnedObjectPath>, OwnedObjectPath) =
            call(c, SERVICE_PATH, SERVICE_IFACE, "Unlock", &(objects,)).await?;
        if prompt.as_str() == NONE {
            return Ok(());
        }
        dismiss(c, &prompt).await;
        Err(locked_error(name))
    }

    /// Withdraws a prompt deskpilot will not show. Best effort: the service drops unused
    /// prompts with the connection anyway.
    async fn dismiss(c: &Connection, prompt: &OwnedObjectPath) {
        if let Err(e) = call::<_, ()>(c, prompt.as_str(), PROMPT_IFACE, "Dismiss", &()).await {
            tracing::debug!("dismissing keyring prompt {}: {e}", prompt.as_str());
        }
    }

    fn locked_error(name: &str) -> KeyringError {
        KeyringError::Locked(format!(
            "the collection holding secret {name} needs its password to unlock and deskpilot \
             shows no prompt; unlock the keyring (Passwords and Keys / seahorse, or log in to \
             the desktop session) and retry"
        ))
    }

    /// The value as text; a value that is not UTF-8 is wiped and refused.
    fn text(value: Vec<u8>, name: &str, content_type: &str) -> Result<String, KeyringError> {
        String::from_utf8(value).map_err(|e| {
            let mut bytes = e.into_bytes();
            bytes.zeroize();
            KeyringError::Failed(format!(
                "the keyring item of secret {name} is not UTF-8 text (content type \
                 {content_type:?}); store it again as text"
            ))
        })
    }

    async fn call<B, R>(
        c: &Connection,
        path: &str,
        iface: &str,
        method: &str,
        body: &B,
    ) -> Result<R, KeyringError>
    where
        B: serde::Serialize + zvariant::DynamicType,
        R: for<'d> zvariant::DynamicDeserialize<'d>,
    {
        let reply = c
            .call_method(Some(DESTINATION), path, Some(iface), method, body)
            .await
            .map_err(|e| classify(method, e))?;
        reply.body().deserialize().map_err(|e| {
            KeyringError::Failed(format!(
                "the Secret Service's answer to {method} was unreadable: {e}"
            ))
        })
    }

    fn classify(method: &str, e: zbus::Error) -> KeyringError {
        let zbus::Error::MethodError(error, _, _) = &e else {
            return KeyringError::Unavailable(format!(
                "the session bus failed during {method}: {e}"
            ));
        };
        match error.as_str() {
            "org.freedesktop.DBus.Error.ServiceUnknown"
            | "org.freedesktop.DBus.Error.NameHasNoOwner" => KeyringError::Unavailable(
                "no Secret Service (org.freedesktop.secrets) on the session bus; start one \
                 (gnome-keyring-daemon --start --components=secrets, or KeePassXC with its \
                 Secret Service integration)"
                    .to_owned(),
            ),
            name if name.starts_with("org.freedesktop.DBus.Error.Spawn") => {
                KeyringError::Unavailable(format!(
                    "the session bus could not start the Secret Service: {e}"
                ))
            }
            "org.freedesktop.DBus.Error.NoReply" | "org.freedesktop.DBus.Error.Timeout" => {
                KeyringError::Unavailable(format!(
                    "the Secret Service did not answer {method}: {e}"
                ))
            }
            "org.freedesktop.Secret.Error.IsLocked" => KeyringError::Locked(format!(
                "{method} needs a locked collection; unlock the keyring (Passwords and Keys / \
                 seahorse, or log in to the desktop session) and retry"
            )),
            _ => KeyringError::Failed(format!("{method}: {e}")),
        }
    }
}

#[cfg(windows)]
mod credential_manager {
    //! Generic credentials in Credential Manager, target `deskpilot:NAME`.

    use windows::Win32::Foundation::{ERROR_NO_SUCH_LOGON_SESSION, ERROR_NOT_FOUND};
    use windows::Win32::Security::Credentials::{
        CRED_MAX_CREDENTIAL_BLOB_SIZE, CRED_PERSIST_LOCAL_MACHINE, CRED_TYPE_GENERIC, CREDENTIALW,
        CredFree, CredReadW, CredWriteW,
    };
    use windows::core::{PCWSTR, PWSTR};
    use zeroize::Zeroize;

    use super::{KeyringError, SERVICE};

    /// A NUL-terminated UTF-16 string.
    fn wide(s: &str) -> Vec<u16> {
        s.encode_utf16().chain(std::iter::once(0)).collect()
    }

    fn target(name: &str) -> Vec<u16> {
        wide(&format!("{SERVICE}:{name}"))
    }

    pub(super) fn lookup(name: &str) -> Result<Option<String>, KeyringError> {
        let target = target(name);
        let mut credential: *mut CREDENTIALW = std::ptr::null_mut();
        // SAFETY: `target` is NUL-terminated and outlives the call; on success `credential`
        // points to a buffer the system allocated, freed with CredFree below.
        let read = unsafe {
            CredReadW(
                PCWSTR(target.as_ptr()),
                CRED_TYPE_GENERIC,
                None,
                &mut credential,
            )
        };
        match read {
            Ok(()) => {}
            Err(e) if e.code() == ERROR_NOT_FOUND.to_hresult() => return Ok(None),
            Err(e) => return Err(classify(&e)),
        }
        // SAFETY: CredReadW succeeded, so `credential` points to a valid CREDENTIALW whose blob
        // holds CredentialBlobSize bytes (or is null); the buffer stays ours until CredFree.
        let blob: &mut [u8] = unsafe {
            let c = &*credential;
            if c.CredentialBlob.is_null() || c.CredentialBlobSize == 0 {
                &mut []
            } else {
                std::slice::from_raw_parts_mut(c.CredentialBlob, c.CredentialBlobSize as usize)
            }
        };
        let value = super::decode_blob(blob, name);
        blob.zeroize();
        // SAFETY: `credential` came from CredReadW and is freed once; `blob` is not used after.
        unsafe { CredFree(credential.cast_const().cast()) };
        value.map(Some)
    }

    pub(super) fn store(name: &str, value: &str) -> Result<(), KeyringError> {
        let mut target = target(name);
        let mut user = wide(SERVICE);
        let mut blob: Vec<u8> = value.encode_utf16().flat_map(u16::to_le_bytes).collect();
        if blob.len() > CRED_MAX_CREDENTIAL_BLOB_SIZE as usize {
            blob.zeroize();
            return Err(KeyringError::Failed(format!(
                "the value of secret {name} is longer than Credential Manager holds ({} UTF-16 \
                 units at most)",
                CRED_MAX_CREDENTIAL_BLOB_SIZE / 2
            )));
        }
        let credential = CREDENTIALW {
            Type: CRED_TYPE_GENERIC,
            TargetName: PWSTR(target.as_mut_ptr()),
            CredentialBlobSize: blob.len() as u32,
            CredentialBlob: blob.as_mut_ptr(),
            Persist: CRED_PERSIST_LOCAL_MACHINE,
            UserName: PWSTR(user.as_mut_ptr()),
            ..Default::default()
        };
        // SAFETY: every pointer in `credential` points into a buffer of this frame that lives
        // until after the call; CredWriteW copies what it keeps.
        let written = unsafe { CredWriteW(&credential, 0) };
        blob.zeroize();
        written.map_err(|e| classify(&e))
    }

    pub(super) fn probe() -> Result<(), KeyringError> {
        match lookup("probe (never stored)") {
            Ok(_) => Ok(()),
            Err(e @ KeyringError::Unavailable(_)) => Err(e),
            Err(_) => Ok(()),
        }
    }

    fn classify(e: &windows::core::Error) -> KeyringError {
        if e.code() == ERROR_NO_SUCH_LOGON_SESSION.to_hresult() {
            KeyringError::Unavailable(
                "Credential Manager has no logon session here (a service or network logon \
                 without a loaded profile); run deskpilot in the person's interactive session"
                    .to_owned(),
            )
        } else {
            KeyringError::Failed(format!("Credential Manager: {}", e.message()))
        }
    }
}

/// A Credential Manager blob as text. Windows' own tools (`cmdkey`, the Control Panel) and most
/// libraries write UTF-16LE; some (Git Credential Manager) write UTF-8. UTF-8 text never holds
/// a NUL byte while UTF-16 of Latin text is full of them, and UTF-16 of other scripts is almost
/// never valid UTF-8: so NUL-free valid UTF-8 is read as UTF-8, anything else as UTF-16LE.
#[cfg(any(windows, test))]
fn decode_blob(blob: &[u8], name: &str) -> Result<String, KeyringError> {
    use zeroize::Zeroize;
    if !blob.contains(&0)
        && let Ok(text) = std::str::from_utf8(blob)
    {
        return Ok(text.to_owned());
    }
    let text = blob
        .len()
        .is_multiple_of(2)
        .then(|| {
            let mut units: Vec<u16> = blob
                .chunks_exact(2)
                .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                .collect();
            let text = String::from_utf16(&units).ok();
            units.zeroize();
            text
        })
        .flatten();
    match text {
        Some(text) => Ok(text),
        None => Err(KeyringError::Failed(format!(
            "the credential deskpilot:{name} is neither UTF-16 nor UTF-8 text; store it again \
             (cmdkey /generic:deskpilot:{name} /user:deskpilot /pass)"
        ))),
    }
}

#[cfg(not(any(target_os = "linux", windows)))]
mod unsupported {
    use super::KeyringError;

    fn none() -> KeyringError {
        KeyringError::Unavailable("deskpilot knows no desktop keyring on this OS".to_owned())
    }

    pub(super) fn lookup(_name: &str) -> Result<Option<String>, KeyringError> {
        Err(none())
    }

    pub(super) fn store(_name: &str, _value: &str) -> Result<(), KeyringError> {
        Err(none())
    }

    pub(super) fn probe() -> Result<(), KeyringError> {
        Err(none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_blobs_read_as_utf16_or_utf8() {
        let utf16 = |s: &str| {
            s.encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect::<Vec<u8>>()
        };
        for value in ["hunter2hunter2", "pässwörd", "中文密码", "ab", ""] {
            assert_eq!(
                decode_blob(&utf16(value), "x").unwrap(),
                value,
                "UTF-16 of {value:?}"
            );
            assert_eq!(
                decode_blob(value.as_bytes(), "x").unwrap(),
                value,
                "UTF-8 of {value:?}"
            );
        }
        assert_eq!(
            decode_blob(b"abc", "x").unwrap(),
            "abc",
            "odd length: UTF-8"
        );
        let e = decode_blob(&[0x00, 0xd8, 0x00], "x").unwrap_err();
        assert!(matches!(e, KeyringError::Failed(_)), "{e}");
        let e = decode_blob(&[0x00, 0xd8], "x").unwrap_err();
        assert!(matches!(e, KeyringError::Failed(_)), "lone surrogate: {e}");
        assert!(e.to_string().contains("cmdkey /generic:deskpilot:x"), "{e}");
    }

    /// Against Credential Manager (Wine's in CI): values round-trip, the blob is UTF-16 as
    /// `cmdkey` writes it, and a UTF-8 blob from another tool reads back as the same text.
    #[cfg(windows)]
    #[test]
    fn credentials_round_trip_through_credential_manager() {
        use windows::Win32::Security::Credentials::{
            CRED_PERSIST_LOCAL_MACHINE, CRED_TYPE_GENERIC, CREDENTIALW, CredDeleteW, CredFree,
            CredReadW, CredWriteW,
        };
        use windows::core::{PCWSTR, PWSTR};

        let wide = |s: &str| s.encode_utf16().chain([0]).collect::<Vec<u16>>();
        let raw_blob = |target: &[u16]| {
            let mut c: *mut CREDENTIALW = std::ptr::null_mut();
            // SAFETY: `target` is NUL-terminated; `c` is freed below.
            unsafe { CredReadW(PCWSTR(target.as_ptr()), CRED_TYPE_GENERIC, None, &mut c) }.unwrap();
            // SAFETY: CredReadW succeeded: `c` is valid with CredentialBlobSize bytes of blob.
            let blob = unsafe {
                std::slice::from_raw_parts((*c).CredentialBlob, (*c).CredentialBlobSize as usize)
                    .to_vec()
            };
            // SAFETY: `c` came from CredReadW and is freed once.
            unsafe { CredFree(c.cast_const().cast()) };
            blob
        };
        let name = format!("keyring-test-{}", std::process::id());
        let target = wide(&format!("deskpilot:{name}"));
        assert!(available());
        assert_eq!(lookup(&name).unwrap(), None, "nothing stored yet");

        store(&name, "pässwörd-中文").unwrap();
        let utf16: Vec<u8> = "pässwörd-中文"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(raw_blob(&target), utf16, "the blob is UTF-16LE");
        assert_eq!(lookup(&name).unwrap().as_deref(), Some("pässwörd-中文"));
        store(&name, "second").unwrap();
        assert_eq!(
            lookup(&name).unwrap().as_deref(),
            Some("second"),
            "replaced"
        );

        let mut utf8 = b"git-credential-style".to_vec();
        let mut target_mut = target.clone();
        let credential = CREDENTIALW {
            Type: CRED_TYPE_GENERIC,
            TargetName: PWSTR(target_mut.as_mut_ptr()),
            CredentialBlobSize: utf8.len() as u32,
            CredentialBlob: utf8.as_mut_ptr(),
            Persist: CRED_PERSIST_LOCAL_MACHINE,
            ..Default::default()
        };
        // SAFETY: the pointers point into buffers of this frame that outlive the call.
        unsafe { CredWriteW(&credential, 0) }.unwrap();
        assert_eq!(
            lookup(&name).unwrap().as_deref(),
            Some("git-credential-style")
        );

        // SAFETY: `target` is NUL-terminated.
        unsafe { CredDeleteW(PCWSTR(target.as_ptr()), CRED_TYPE_GENERIC, None) }.unwrap();
        assert_eq!(lookup(&name).unwrap(), None, "deleted");
    }

    /// Against a real Secret Service: a private session bus (no service activation) with
    /// gnome-keyring-daemon on it, its login collection unlocked by a password on stdin.
    /// The oracle is `secret-tool` (libsecret), not this module.
    #[cfg(target_os = "linux")]
    mod secret_service {
        use std::io::{BufRead, BufReader, Write};
        use std::path::{Path, PathBuf};
        use std::process::{Child, Command, Stdio};
        use std::time::{Duration, Instant};

        use zbus::zvariant::OwnedObjectPath;

        use super::super::KeyringError;
        use super::super::secret_service::{Bus, DEADLINE, lookup_on, probe_on, store_on};

        const T: Duration = Duration::from_secs(10);

        #[allow(clippy::print_stderr)]
        fn tools_present() -> bool {
            let on_path = |tool: &str| {
                std::env::var_os("PATH")
                    .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
            };
            let missing: Vec<&str> = ["dbus-daemon", "gnome-keyring-daemon", "secret-tool"]
                .into_iter()
                .filter(|tool| !on_path(tool))
                .collect();
            if missing.is_empty() {
                return true;
            }
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but {missing:?} missing (scripts/install-deps test installs \
                 gnome-keyring and libsecret-tools)"
            );
            eprintln!(
                "SKIP: the keyring test needs {missing:?} (scripts/install-deps test installs them)"
            );
            false
        }

        /// A private session bus, later with gnome-keyring-daemon on it; both end with it.
        struct Desk {
            dir: PathBuf,
            address: String,
            bus: Child,
            daemon: Option<Child>,
        }

        impl Desk {
            fn start(tag: &str) -> Desk {
                let dir = std::env::temp_dir()
                    .join(format!("deskpilot-keyring-{tag}-{}", std::process::id()));
                let _ = std::fs::remove_dir_all(&dir);
                for sub in ["home", "data", "config", "runtime"] {
                    std::fs::create_dir_all(dir.join(sub)).unwrap();
                }
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(
                    dir.join("runtime"),
                    std::fs::Permissions::from_mode(0o700),
                )
                .unwrap();
                // No <servicedir>: nothing is activated behind the test's back.
                let config = dir.join("bus.conf");
                std::fs::write(
                    &config,
                    format!(
                        "<busconfig><type>session</type><listen>unix:dir={}</listen>\
                         <auth>EXTERNAL</auth><policy context=\"default\">\
                         <allow send_destination=\"*\" eavesdrop=\"true\"/>\
                         <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>",
                        dir.join("runtime").display()
                    ),
                )
                .unwrap();
                let mut bus = Command::new("dbus-daemon")
                    .arg(format!("--config-file={}", config.display()))
                    .args(["--nofork", "--nosyslog", "--print-address=1"])
                    .envs(Self::env(&dir))
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    // It warns that it may not raise its fd limit; nothing the test needs.
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("dbus-daemon starts");
                let stdout = bus.stdout.take().unwrap();
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let mut line = String::new();
                    let _ = BufReader::new(stdout).read_line(&mut line);
                    let _ = tx.send(line);
                });
                let address = rx.recv_timeout(T).expect("dbus-daemon prints its address");
                let address = address.trim().to_owned();
                assert!(address.starts_with("unix:"), "{address:?}");
                Desk {
                    dir,
                    address,
                    bus,
                    daemon: None,
                }
            }

            fn env(dir: &Path) -> Vec<(&'static str, PathBuf)> {
                vec![
                    ("HOME", dir.join("home")),
                    ("XDG_DATA_HOME", dir.join("data")),
                    ("XDG_CONFIG_HOME", dir.join("config")),
                    ("XDG_RUNTIME_DIR", dir.join("runtime")),
                ]
            }

            fn bus(&self) -> Bus<'_> {
                Bus::Address(&self.address)
            }

            /// gnome-keyring-daemon on the bus, polled until the Secret Service answers.
            fn start_keyring(&mut self) {
                let log = std::fs::File::create(self.dir.join("daemon.log")).unwrap();
                let mut daemon = Command::new("gnome-keyring-daemon")
                    .args(["--foreground", "--unlock", "--components=secrets"])
                    .envs(Self::env(&self.dir))
                    .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                    .env_remove("DISPLAY")
                    .env_remove("WAYLAND_DISPLAY")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .stderr(log)
                    .spawn()
                    .expect("gnome-keyring-daemon starts");
                // The login collection's password; EOF ends it.
                daemon
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(b"login-password")
                    .unwrap();
                self.daemon = Some(daemon);
                let until = Instant::now() + T;
                loop {
                    match probe_on(self.bus()) {
                        Ok(()) => return,
                        Err(e) if Instant::now() > until => panic!(
                            "the Secret Service never answered: {e}; daemon log: {}",
                            std::fs::read_to_string(self.dir.join("daemon.log"))
                                .unwrap_or_default()
                        ),
                        Err(_) => std::thread::sleep(Duration::from_millis(50)),
                    }
                }
            }

            /// `secret-tool ARGS` on this bus: (success, stdout).
            fn secret_tool(&self, args: &[&str], stdin: Option<&str>) -> (bool, String) {
                let mut child = Command::new("timeout")
                    .arg(T.as_secs().to_string())
                    .arg("secret-tool")
                    .args(args)
                    .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                    .stdin(if stdin.is_some() {
                        Stdio::piped()
                    } else {
                        Stdio::null()
                    })
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("secret-tool starts");
                if let Some(text) = stdin {
                    child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(text.as_bytes())
                        .unwrap();
                }
                let out = child.wait_with_output().unwrap();
                (out.status.success(), String::from_utf8(out.stdout).unwrap())
            }

            /// The default collection locked again, as after a screen lock or a timeout.
            fn lock_default_collection(&self) {
                async_io::block_on(async {
                    let c = zbus::conn::Builder::address(self.address.as_str())
                        .unwrap()
                        .build()
                        .await
                        .unwrap();
                    let service = zbus::Proxy::new(
                        &c,
                        "org.freedesktop.secrets",
                        "/org/freedesktop/secrets",
                        "org.freedesktop.Secret.Service",
                    )
                    .await
                    .unwrap();
                    let default: OwnedObjectPath =
                        service.call("ReadAlias", &("default",)).await.unwrap();
                    let (locked, prompt): (Vec<OwnedObjectPath>, OwnedObjectPath) = service
                        .call("Lock", &(vec![default.clone()],))
                        .await
                        .unwrap();
                    assert_eq!(prompt.as_str(), "/", "locking needs no prompt");
                    assert_eq!(locked, vec![default]);
                });
            }
        }

        impl Drop for Desk {
            fn drop(&mut self) {
                for child in self.daemon.iter_mut().chain([&mut self.bus]) {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                let _ = std::fs::remove_dir_all(&self.dir);
            }
        }

        #[test]
        #[allow(clippy::print_stderr)] // the measured lookup time
        fn secrets_are_read_and_stored_in_gnome_keyring_and_a_locked_one_is_refused() {
            if !tools_present() {
                return;
            }
            let mut desk = Desk::start("roundtrip");
            let mut errors = Vec::new();

            // A bus without a Secret Service.
            let e = lookup_on(desk.bus(), "demo").unwrap_err();
            assert!(matches!(e, KeyringError::Unavailable(_)), "{e}");
            assert!(e.to_string().contains("no Secret Service"), "{e}");
            assert!(probe_on(desk.bus()).is_err());
            errors.push(e.to_string());

            desk.start_keyring();
            assert_eq!(
                lookup_on(desk.bus(), "demo").unwrap(),
                None,
                "nothing stored yet"
            );

            // An item a person stored with secret-tool is read.
            let first = "hunter2-pässwörd-中文";
            let stored = desk.secret_tool(
                &[
                    "store",
                    "--label=deskpilot demo",
                    "service",
                    "deskpilot",
                    "name",
                    "demo",
                ],
                Some(first),
            );
            assert!(stored.0, "secret-tool store: {stored:?}");
            assert_eq!(
                lookup_on(desk.bus(), "demo").unwrap().as_deref(),
                Some(first)
            );

            // Replacing it changes that item (secret-tool's carries an extra xdg:schema
            // attribute), no second one appears.
            let second = "second value, longer: 🔑 ok";
            store_on(desk.bus(), "demo", second).unwrap();
            let read = desk.secret_tool(&["lookup", "service", "deskpilot", "name", "demo"], None);
            assert_eq!(
                read,
                (true, second.to_owned()),
                "secret-tool reads the new value"
            );
            let (_, items) = desk.secret_tool(
                &["search", "--all", "service", "deskpilot", "name", "demo"],
                None,
            );
            assert_eq!(
                items.lines().filter(|l| l.starts_with("[/")).count(),
                1,
                "{items}"
            );
            assert_eq!(
                lookup_on(desk.bus(), "demo").unwrap().as_deref(),
                Some(second)
            );

            // A name with no item is created in the default collection, labelled for people.
            store_on(desk.bus(), "fresh", "fresh-secret-value").unwrap();
            let read = desk.secret_tool(&["lookup", "service", "deskpilot", "name", "fresh"], None);
            assert_eq!(read, (true, "fresh-secret-value".to_owned()));
            let (_, items) = desk.secret_tool(
                &["search", "--all", "service", "deskpilot", "name", "fresh"],
                None,
            );
            assert!(items.contains("label = deskpilot fresh"), "{items}");

            assert_eq!(lookup_on(desk.bus(), "absent").unwrap(), None);

            let mut took: Vec<Duration> = (0..30)
                .map(|_| {
                    let t = Instant::now();
                    assert_eq!(
                        lookup_on(desk.bus(), "demo").unwrap().as_deref(),
                        Some(second)
                    );
                    t.elapsed()
                })
                .collect();
            took.sort();
            eprintln!(
                "keyring lookup over a private bus (connect, search, session, GetSecrets): \
                 p50 {:.1} ms, max {:.1} ms over {} lookups",
                took[took.len() / 2].as_secs_f64() * 1e3,
                took[took.len() - 1].as_secs_f64() * 1e3,
                took.len()
            );
            assert!(took[took.len() / 2] < DEADLINE);

            // Locked: no prompt is shown, the answer says what to do.
            desk.lock_default_collection();
            let e = lookup_on(desk.bus(), "demo").unwrap_err();
            assert!(matches!(e, KeyringError::Locked(_)), "{e}");
            assert!(e.to_string().contains("shows no prompt"), "{e}");
            errors.push(e.to_string());
            let e = store_on(desk.bus(), "demo", "third").unwrap_err();
            assert!(matches!(e, KeyringError::Locked(_)), "{e}");
            assert!(e.to_string().contains("shows no prompt"), "{e}");
            errors.push(e.to_string());
            let read = desk.secret_tool(&["lookup", "service", "deskpilot", "name", "demo"], None);
            assert_ne!(read.1, "third", "a refused store changed nothing");

            for message in &errors {
                for value in [first, second, "third", "fresh-secret-value"] {
                    assert!(!message.contains(value), "{message}");
                }
            }
        }

        #[test]
        fn a_bus_that_never_answers_costs_the_deadline_not_a_hang() {
            let dir =
                std::env::temp_dir().join(format!("deskpilot-keyring-hung-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            // Accepted by the kernel's backlog, never answered.
            let socket = dir.join("bus");
            let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
            let address = format!("unix:path={}", socket.display());
            for op in ["lookup", "store"] {
                let t = Instant::now();
                let e = match op {
                    "lookup" => lookup_on(Bus::Address(&address), "demo").unwrap_err(),
                    _ => store_on(Bus::Address(&address), "demo", "value").unwrap_err(),
                };
                let took = t.elapsed();
                assert!(matches!(e, KeyringError::Unavailable(_)), "{op}: {e}");
                assert!(e.to_string().contains("did not answer"), "{op}: {e}");
                assert!(
                    took >= DEADLINE && took < DEADLINE + Duration::from_secs(1),
                    "{op} took {took:?}"
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
        }

        #[test]
        fn no_bus_is_unavailable_at_once() {
            let t = Instant::now();
            let e = lookup_on(Bus::Address("unix:path=/nonexistent/deskpilot-bus"), "demo")
                .unwrap_err();
            assert!(matches!(e, KeyringError::Unavailable(_)), "{e}");
            assert!(e.to_string().contains("cannot reach"), "{e}");
            assert!(t.elapsed() < DEADLINE / 4, "{:?}", t.elapsed());
        }
    }
}
