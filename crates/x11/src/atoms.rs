//! The atoms deskpilot uses, interned once per connection in one round trip.

x11rb::atom_manager! {
    /// Interned atoms.
    pub Atoms: AtomsCookie {
        UTF8_STRING,
        WM_STATE,
        WM_CHANGE_STATE,
        WM_PROTOCOLS,
        WM_DELETE_WINDOW,
        _NET_WM_PING,
        CLIPBOARD,
        TARGETS,
        INCR,
        TEXT,
        TIMESTAMP,
        MULTIPLE,
        DESKPILOT_SELECTION,
        TEXT_PLAIN_UTF8: b"text/plain;charset=utf-8",
        _NET_CLOSE_WINDOW,
        _NET_MOVERESIZE_WINDOW,
        _NET_CLIENT_LIST,
        _NET_CLIENT_LIST_STACKING,
        _NET_ACTIVE_WINDOW,
        _NET_WM_NAME,
        _NET_WM_PID,
        _NET_WM_STATE,
        _NET_WM_STATE_HIDDEN,
        _NET_WM_STATE_MAXIMIZED_VERT,
        _NET_WM_STATE_MAXIMIZED_HORZ,
        _NET_WM_STATE_FULLSCREEN,
        _NET_FRAME_EXTENTS,
        _NET_SUPPORTING_WM_CHECK,
        AT_SPI_BUS,
    }
}
