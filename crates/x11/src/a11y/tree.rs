//! A window's tree: reuse of the last node list while the application sent no events, else
//! the frame, the cache and the walk; then enrichment, all within `timeout_ms`, partial when
//! it runs out.

use super::*;

impl X11Desktop {
    /// What `app`'s toolkit does differently, asked once per application.
    pub(super) async fn app_traits(&self, conn: &zbus::Connection, app: &str) -> AppTraits {
        if let Some(t) = self
            .a11y
            .apps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(app)
        {
            return *t;
        }
        let shown = match toolkit(conn, app).await {
            Some((name, version)) => {
                tracing::debug!(app, name, version, "toolkit");
                if bulk_properties(&name) {
                    serves_bulk(app);
                }
                policy(&name, &version)
            }
            None => Shown::Marked,
        };
        let traits = AppTraits {
            shown,
            relative: None,
        };
        let mut apps = self.a11y.apps.lock().unwrap_or_else(|e| e.into_inner());
        if apps.len() > 256 {
            apps.clear();
        }
        *apps.entry(app.to_string()).or_insert(traits)
    }

    /// Whether `app` reports extents relative to its window, decided on `frame` (its frame's
    /// extents as reported) where `window` tells, and remembered for the application.
    pub(super) fn window_relative(
        &self,
        app: &str,
        frame: Option<Rect>,
        window: &WindowInfo,
    ) -> bool {
        let mut apps = self.a11y.apps.lock().unwrap_or_else(|e| e.into_inner());
        let Some(traits) = apps.get_mut(app) else {
            return false;
        };
        if let Some(r) = traits.relative {
            return r;
        }
        let decided = frame.and_then(|f| window_relative(f, window));
        if let Some(r) = decided {
            tracing::debug!(app, relative = r, "extents relative to the window?");
            traits.relative = Some(r);
        }
        decided.unwrap_or(false)
    }

    /// Finds the window's frame and reads the nodes under it (cache, then walk), and remembers
    /// them with the application's event count from before the read.
    async fn read_nodes(
        &self,
        conn: &zbus::Connection,
        window: &WindowInfo,
        limits: &TreeLimits,
        deadline: Instant,
    ) -> Result<(Vec<Node>, &'static str, usize, bool), Error> {
        // A remembered frame is re-validated by the read itself (the cache must still list
        // it as showing) or, for walked apps, by one state query; a stale one is looked up again.
        let mut remembered = self
            .a11y
            .frames
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&window.id.0)
            .cloned();
        let (frame, outcome, app, count) = loop {
            let fresh = remembered.is_none();
            let frame = match remembered.take() {
                Some(f) => f,
                None => {
                    find_frame(conn, window, &self.a11y.pids, || self.root_bus_property()).await?
                }
            };
            let app = frame.object.name_as_str().unwrap_or_default().to_string();
            // Counted before the read: an event during it makes the next read fresh.
            let count = self.a11y.changes.count(&app);
            let policy = self.app_traits(conn, &app).await.shown;
            let walk_only = self
                .a11y
                .no_cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&app);
            let outcome = if walk_only {
                FromCache::Unusable
            } else {
                from_cache(conn, &frame, limits, policy, deadline).await
            };
            let frame = match (&outcome, fresh) {
                (FromCache::FrameGone, false) => continue,
                (FromCache::Unusable | FromCache::NotNow, false) => {
                    match still_showing(conn, &frame).await {
                        Some(f) => f,
                        None => continue,
                    }
                }
                _ => frame,
            };
            if let FromCache::Unusable = outcome {
                self.a11y
                    .no_cache
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(app.clone());
            }
            break (frame, outcome, app, count);
        };
        {
            let mut frames = self.a11y.frames.lock().unwrap_or_else(|e| e.into_inner());
            if frames.len() > 256 {
                frames.clear();
            }
            frames.insert(window.id.0, frame.clone());
        }
        let (mut nodes, source, unfinished) = match outcome {
            FromCache::Tree(nodes, unfinished) => (nodes, "atspi-cache", unfinished),
            // A fresh frame the cache does not list (yet): read it directly this time.
            FromCache::Unusable | FromCache::NotNow | FromCache::FrameGone => {
                (vec![frame.clone()], "atspi-walk", vec![0])
            }
        };
        let walked = unfinished.len();
        tracing::debug!(
            nodes = nodes.len(),
            unfinished = unfinished.len(),
            "first pass"
        );
        let focused = self.a11y.changes.focused(&app);
        let policy = self.app_traits(conn, &app).await.shown;
        let finished = walk(
            conn,
            &mut nodes,
            unfinished,
            limits,
            deadline,
            focused.as_deref(),
            policy,
        )
        .await;
        let nodes = depth_first(nodes);
        if !finished {
            // A cut-short read is returned, never reused.
            return Ok((nodes, source, walked, false));
        }
        let mut trees = self.a11y.trees.lock().unwrap_or_else(|e| e.into_inner());
        if trees.len() > 256 {
            trees.clear();
        }
        trees.insert(
            window.id.0,
            KnownTree {
                app,
                count,
                limits: (limits.max_elements, limits.max_depth),
                nodes: nodes.clone(),
                source,
                walked,
            },
        );
        Ok((nodes, source, walked, true))
    }

    /// Reads `window`'s tree.
    ///
    /// # Timeouts
    /// `limits.timeout` bounds the read. At four fifths of it, a walk still going keeps the
    /// levels it read and elements whose details did not arrive come back bare; the tree is
    /// then marked incomplete with a note. When the application answered nothing at all, the
    /// read fails with [`Error::Timeout`] at `limits.timeout`.
    pub(super) fn read_tree(
        &self,
        window: &WindowInfo,
        limits: &TreeLimits,
    ) -> Result<RawTree, Error> {
        let started = Instant::now();
        let deadline = started + limits.timeout * 4 / 5;
        let conn = &self.a11y.connection()?;
        run(limits.timeout, "reading the accessibility tree", async {
            let t0 = Instant::now();
            // The whole node list of the last read, while the app has sent no event since.
            let settled = !limits.fresh && self.a11y.changes.settled(conn).await;
            let unchanged = self
                .a11y
                .trees
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&window.id.0)
                .filter(|m| {
                    settled
                        && m.limits == (limits.max_elements, limits.max_depth)
                        && self.a11y.changes.count(&m.app) == m.count
                })
                .cloned();
            let (nodes, source, walked, finished, reused) = match unchanged {
                Some(m) => {
                    tracing::debug!(nodes = m.nodes.len(), "tree reused: no events since");
                    (m.nodes, m.source, m.walked, true, true)
                }
                None => {
                    let (nodes, source, walked, finished) =
                        self.read_nodes(conn, window, limits, deadline).await?;
                    (nodes, source, walked, finished, false)
                }
            };
            let t_nodes = t0.elapsed();
            let truncated = nodes.len() >= limits.max_elements;
            let (mut elements, unanswered) = enrich(conn, &nodes, window, deadline).await;
            if reused && unanswered == elements.len() && !elements.is_empty() {
                // Nothing at all came from the application: there is nothing to return.
                return Err(Error::Timeout {
                    operation: "reading the accessibility tree".to_string(),
                    after: limits.timeout,
                });
            }
            let mut notes = Vec::new();
            if !finished {
                notes.push(TreeNote::TimedOut {
                    limit: limits.timeout,
                    read: nodes.len(),
                });
            }
            if unanswered > 0 {
                notes.push(TreeNote::Unanswered {
                    limit: limits.timeout,
                    unanswered,
                    elements: elements.len(),
                });
            }
            let app = nodes
                .first()
                .and_then(|n| n.object.name_as_str())
                .unwrap_or_default()
                .to_string();
            let traits = self.app_traits(conn, &app).await;
            if traits.shown == Shown::VisibleAndPlaced && unanswered == 0 {
                // GTK 4: hidden widgets are visible with empty extents.
                elements = drop_unplaced(elements);
            }
            let frame_bounds = elements.first().and_then(|e| e.bounds);
            let offset = if self.window_relative(&app, frame_bounds, window) {
                (window.client.x, window.client.y)
            } else {
                (0, 0)
            };
            let placement = Placement {
                offset,
                scale: frame_bounds
                    .map(|b| Rect::new(b.x + offset.0, b.y + offset.1, b.width, b.height))
                    .and_then(|f| Scale::of(f, window)),
            };
            placement.apply(&mut elements, window);
            if let Some(s) = placement.scale {
                notes.push(TreeNote::LogicalCoordinates { scale: s.sx });
            }
            if let Some(frame) = nodes.first() {
                self.a11y.remember_placement(&frame.object, placement);
            }
            tracing::debug!(
                nodes_ms = t_nodes.as_secs_f64() * 1e3,
                enrich_ms = (t0.elapsed() - t_nodes).as_secs_f64() * 1e3,
                "accessibility tree phases"
            );
            if source == "atspi-cache" && walked > 0 && walked < nodes.len() {
                notes.push(TreeNote::ReadDirectly { containers: walked });
            }
            tracing::debug!(
                elements = elements.len(),
                source,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "accessibility tree"
            );
            Ok(RawTree {
                elements,
                source: source.to_string(),
                complete: !truncated && finished && unanswered == 0,
                notes,
            })
        })
    }
}
