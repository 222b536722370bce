//! The catalog of launchable apps (`WindowControl::installed_apps`): the Start-menu shortcuts
//! of this user and of all users, joined by the shell's Applications folder
//! (`shell:AppsFolder`, where packaged apps and AUMIDs live).
//!
//! The shortcuts are files, read by `deskpilot_backend::apps::start_menu_apps`; the rules that
//! join the two lists are `deskpilot_backend::apps::with_apps_folder`. This module only finds
//! the folders (`SHGetKnownFolderPath`, else `%APPDATA%` / `%ProgramData%`) and enumerates the
//! Applications folder through COM: `SHGetKnownFolderItem(FOLDERID_AppsFolder)` →
//! `BindToHandler(BHID_EnumItems)` → each item's display name and `PKEY_AppUserModel_ID`.
//!
//! Invariant: a failure of the Applications-folder part (no COM, no such folder — Wine has
//! none — or a broken item) never loses the shortcuts: it is logged at debug level and the
//! shortcuts are returned alone. COM is entered on the calling thread only for the enumeration
//! and left before returning; no interface pointer outlives it.

use std::path::PathBuf;

use deskpilot_backend::apps::{AppsFolderItem, InstalledApp, start_menu_apps, with_apps_folder};
use windows::Win32::Foundation::RPC_E_CHANGED_MODE;
use windows::Win32::Storage::EnhancedStorage::PKEY_AppUserModel_ID;
use windows::Win32::System::Com::{
    COINIT_APARTMENTTHREADED, COINIT_DISABLE_OLE1DDE, CoInitializeEx, CoTaskMemFree,
    CoUninitialize, IBindCtx,
};
use windows::Win32::UI::Shell::{
    BHID_EnumItems, FOLDERID_AppsFolder, FOLDERID_CommonPrograms, FOLDERID_Programs,
    IEnumShellItems, IShellItem, IShellItem2, KF_FLAG_DEFAULT, SHGetKnownFolderItem,
    SHGetKnownFolderPath, SIGDN_NORMALDISPLAY,
};
use windows::core::{GUID, Interface, PWSTR};

/// More items than any Start menu holds: an enumerator that never ends stops here.
const MAX_APPS_FOLDER_ITEMS: usize = 10_000;

/// The apps a person could start: Start-menu shortcuts first, then what the Applications
/// folder adds, sorted by name.
pub(crate) fn installed_apps() -> Vec<InstalledApp> {
    let shortcuts = start_menu_apps(&start_menu_dirs());
    let items = match apps_folder_items() {
        Ok(items) => items,
        Err(e) => {
            tracing::debug!("the Applications folder (shell:AppsFolder) could not be read: {e}");
            Vec::new()
        }
    };
    with_apps_folder(shortcuts, &items, known_folder_path)
}

/// The user's Start-menu `Programs` folder, then the one of all users.
fn start_menu_dirs() -> Vec<PathBuf> {
    [
        (&FOLDERID_Programs, "APPDATA"),
        (&FOLDERID_CommonPrograms, "ProgramData"),
    ]
    .into_iter()
    .filter_map(|(id, variable)| {
        known_folder(id).map(PathBuf::from).or_else(|| {
            let base = std::env::var_os(variable)?;
            Some(PathBuf::from(base).join(r"Microsoft\Windows\Start Menu\Programs"))
        })
    })
    .collect()
}

/// The directory of a known folder named by its GUID in braces (`{1AC14E77-…}`), as the
/// Applications folder writes it at the start of a desktop app's path.
fn known_folder_path(braced: &str) -> Option<String> {
    let inner = braced.strip_prefix('{')?.strip_suffix('}')?;
    known_folder(&GUID::try_from(inner).ok()?)
}

fn known_folder(id: &GUID) -> Option<String> {
    // SAFETY: `id` points to a live GUID; the returned string is ours to free, which
    // `take_string` does.
    let path = unsafe { SHGetKnownFolderPath(id, KF_FLAG_DEFAULT, None) }.ok()?;
    let path = take_string(path);
    (!path.is_empty()).then_some(path)
}

/// A string the shell allocated with `CoTaskMemAlloc`, copied and freed.
fn take_string(p: PWSTR) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: `p` is a NUL-terminated string from the shell, read once and freed once here.
    unsafe {
        let text = p.to_string().unwrap_or_default();
        CoTaskMemFree(Some(p.0 as *const _));
        text
    }
}

/// COM entered on this thread for as long as the value lives.
///
/// A thread with no apartment gets a single-threaded one (what shell objects are written
/// for); a thread already in the multithreaded apartment (`RPC_E_CHANGED_MODE`) is used as it
/// is, COM then hosting the shell's apartment-threaded objects on a thread of its own. Only
/// an initialisation made here is undone on drop.
struct Apartment {
    entered: bool,
}

impl Apartment {
    fn enter() -> windows::core::Result<Apartment> {
        // SAFETY: initialises COM for this thread; balanced by `Drop` when it succeeded.
        let hr = unsafe { CoInitializeEx(None, COINIT_APARTMENTTHREADED | COINIT_DISABLE_OLE1DDE) };
        if hr == RPC_E_CHANGED_MODE {
            return Ok(Apartment { entered: false });
        }
        hr.ok()?;
        Ok(Apartment { entered: true })
    }
}

impl Drop for Apartment {
    fn drop(&mut self) {
        if self.entered {
            // SAFETY: matches this thread's successful CoInitializeEx (S_OK or S_FALSE); every
            // interface pointer was released before (see `apps_folder_items`).
            unsafe { CoUninitialize() };
        }
    }
}

/// Every item of the Applications folder with its name and AUMID.
fn apps_folder_items() -> windows::core::Result<Vec<AppsFolderItem>> {
    let _apartment = Apartment::enter()?;
    // Every interface pointer lives inside this call, so all are released before
    // `_apartment` leaves COM.
    read_apps_folder()
}

fn read_apps_folder() -> windows::core::Result<Vec<AppsFolderItem>> {
    // SAFETY: a known-folder id and no token (this user); COM is initialised on this thread.
    let folder: IShellItem =
        unsafe { SHGetKnownFolderItem(&FOLDERID_AppsFolder, KF_FLAG_DEFAULT, None) }?;
    // SAFETY: `folder` is a live shell item; no bind context.
    let items: IEnumShellItems =
        unsafe { folder.BindToHandler(None::<&IBindCtx>, &BHID_EnumItems) }?;
    let mut out = Vec::new();
    while out.len() < MAX_APPS_FOLDER_ITEMS {
        let mut batch: [Option<IShellItem>; 1] = [None];
        // SAFETY: a one-element out array (so no count is needed); at the end `Next` says
        // S_FALSE, which is Ok with the slot left empty.
        unsafe { items.Next(&mut batch, None) }?;
        let [Some(item)] = batch else {
            break;
        };
        match describe(&item) {
            Ok(found) => out.push(found),
            Err(e) => tracing::debug!("skipping an item of shell:AppsFolder: {e}"),
        }
    }
    Ok(out)
}

/// One item's display name and AUMID.
fn describe(item: &IShellItem) -> windows::core::Result<AppsFolderItem> {
    // SAFETY: `item` is a live shell item; the string is freed by `take_string`.
    let name = take_string(unsafe { item.GetDisplayName(SIGDN_NORMALDISPLAY) }?);
    let item: IShellItem2 = item.cast()?;
    // SAFETY: as above, with a static property key.
    let aumid = take_string(unsafe { item.GetString(&PKEY_AppUserModel_ID) }?);
    Ok(AppsFolderItem { name, aumid })
}
