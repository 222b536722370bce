//! Acting on elements: actions, states, selection through the container, values, text and
//! focus — each one bounded by `OPERATION_TIMEOUT` — and the `Accessibility` trait impl
//! (`live` and `hits` are `live`'s).

use deskpilot_backend::LiveElement;

use super::*;

/// The selection interface of `o`'s container and `o`'s index in it.
pub(super) async fn container_selection<'c>(
    conn: &'c zbus::Connection,
    o: &ObjectRefOwned,
    what: &'static str,
) -> Result<(SelectionProxy<'c>, i32), Error> {
    let p = accessible(conn, o).await?;
    let (parent, index) = futures_lite::future::zip(p.parent(), p.get_index_in_parent()).await;
    let parent = parent.map_err(dbus_err("Parent"))?;
    let index = index.map_err(dbus_err("GetIndexInParent"))?;
    let ifaces = accessible(conn, &parent)
        .await?
        .get_interfaces()
        .await
        .map_err(dbus_err("GetInterfaces"))?;
    if !ifaces.contains(Interface::Selection) {
        return Err(Error::Unsupported {
            what,
            reason: "the element's container has no selection interface".to_string(),
        });
    }
    Ok((proxy_at::<SelectionProxy>(conn, &parent).await?, index))
}

impl Accessibility for X11Desktop {
    fn do_action(&self, element: &ElementHandle, action: &str) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "the action", async {
            let a = proxy_at::<ActionProxy>(conn, &o).await?;
            let actions = action_names(&a).await?;
            let index = actions
                .iter()
                .position(|x| x.eq_ignore_ascii_case(action))
                .ok_or_else(|| {
                    unavailable(format!(
                        "the element has no action \"{action}\"; it has [{}]",
                        actions
                            .iter()
                            .filter(|x| !x.trim().is_empty())
                            .map(String::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?;
            let done = a
                .do_action(index as i32)
                .await
                .map_err(dbus_err("DoAction"))?;
            if done {
                Ok(())
            } else {
                Err(unavailable(format!("the application refused \"{action}\"")))
            }
        })
    }

    fn states(&self, element: &ElementHandle) -> Result<ElementStates, Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "reading the element's states", async {
            let p = accessible(conn, &o).await?;
            let s = p.get_state().await.map_err(dbus_err("GetState"))?;
            if s.contains(State::Defunct) {
                return Err(Error::ElementGone {
                    reason: "the application reports the element defunct".to_string(),
                });
            }
            let mut flags = states(s, None, Rect::new(0, 0, 0, 0));
            // GTK combo boxes and menus never say "expanded": their popup shows instead.
            if !flags.expanded {
                let role = p.get_role().await.map_err(dbus_err("GetRole"))?;
                if matches!(role, atspi::Role::ComboBox | atspi::Role::Menu) {
                    // By index, never `GetChildren`: a combo box may hold a huge list.
                    let count = p.child_count().await.unwrap_or(0).clamp(0, 64);
                    let shown = join_all((0..count).map(|i| {
                        let p = &p;
                        async move {
                            let c = p.get_child_at_index(i).await.ok()?;
                            let c = accessible(conn, &c).await.ok()?;
                            c.get_state().await.ok().map(|s| s.contains(State::Showing))
                        }
                    }))
                    .await;
                    flags.expanded = shown.into_iter().flatten().any(|showing| showing);
                }
            }
            Ok(flags)
        })
    }

    fn select(&self, element: &ElementHandle) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "selecting", async {
            let (selection, index) = container_selection(conn, &o, "selecting elements").await?;
            if selection
                .select_child(index)
                .await
                .map_err(dbus_err("SelectChild"))?
            {
                Ok(())
            } else {
                Err(unavailable("the container refused the selection"))
            }
        })
    }

    fn deselect(&self, element: &ElementHandle) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "deselecting", async {
            let (selection, index) = container_selection(conn, &o, "deselecting elements").await?;
            // GTK menu bars implement only clearing the whole selection.
            let done = selection.deselect_child(index).await.unwrap_or(false)
                || selection
                    .clear_selection()
                    .await
                    .map_err(dbus_err("ClearSelection"))?;
            if done {
                Ok(())
            } else {
                Err(unavailable("the container refused to deselect"))
            }
        })
    }

    fn set_value(&self, element: &ElementHandle, value: &str) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "setting the value", async {
            let ifaces = accessible(conn, &o)
                .await?
                .get_interfaces()
                .await
                .map_err(dbus_err("GetInterfaces"))?;
            if ifaces.contains(Interface::EditableText) {
                let t = proxy_at::<EditableTextProxy>(conn, &o).await?;
                let done = t
                    .set_text_contents(value)
                    .await
                    .map_err(dbus_err("SetTextContents"))?;
                return if done {
                    Ok(())
                } else {
                    Err(unavailable("the application refused the new text"))
                };
            }
            if ifaces.contains(Interface::Value) {
                let number: f64 = value.trim().parse().map_err(|_| {
                    unavailable(format!(
                        "\"{value}\" is not a number, and this element takes numbers only"
                    ))
                })?;
                let v = proxy_at::<ValueProxy>(conn, &o).await?;
                return v
                    .set_current_value(number)
                    .await
                    .map_err(dbus_err("Value.CurrentValue"));
            }
            Err(unavailable(
                "the element has neither editable text nor a value",
            ))
        })
    }

    fn read_text(&self, element: &ElementHandle) -> Result<String, Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "reading the text", async {
            let ifaces = accessible(conn, &o)
                .await?
                .get_interfaces()
                .await
                .map_err(dbus_err("GetInterfaces"))?;
            if ifaces.contains(Interface::Text) {
                let t = proxy_at::<TextProxy>(conn, &o).await?;
                return t
                    .get_text(0, -1)
                    .await
                    .map(|t| text::strip(&t))
                    .map_err(dbus_err("GetText"));
            }
            if ifaces.contains(Interface::Value) {
                let v = proxy_at::<ValueProxy>(conn, &o).await?;
                return v
                    .current_value()
                    .await
                    .map(|v| format!("{v}"))
                    .map_err(dbus_err("Value.CurrentValue"));
            }
            accessible(conn, &o)
                .await?
                .name()
                .await
                .map(|n| text::clean(&n))
                .map_err(dbus_err("Name"))
        })
    }

    fn focus(&self, element: &ElementHandle) -> Result<(), Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "focusing", async {
            let c = proxy_at::<ComponentProxy>(conn, &o).await?;
            if c.grab_focus().await.map_err(dbus_err("GrabFocus"))? {
                Ok(())
            } else {
                Err(unavailable("the application refused the focus"))
            }
        })
    }

    fn live(&self, element: &ElementHandle) -> Result<LiveElement, Error> {
        self.live_element(element)
    }

    fn hits(&self, element: &ElementHandle, at: Point) -> Result<bool, Error> {
        self.hit_test(element, at)
    }

    /// # Timeouts
    /// Returns by `deadline` (see the `passwords` module).
    fn password_fields(
        &self,
        windows: &[WindowInfo],
        deadline: Instant,
    ) -> Result<deskpilot_backend::PasswordFields, Error> {
        self.find_password_fields(windows, deadline)
    }

    /// # Timeouts
    /// See [`X11Desktop::read_tree`]: partial when `limits.timeout` runs out.
    fn tree(&self, window: &WindowInfo, limits: &TreeLimits) -> Result<RawTree, Error> {
        self.read_tree(window, limits)
    }
}
