function(n){ if (n.tagName === 'IFRAME') return true; for (let x = n; x; x = x.parentNode || x.host) { if (x === this) return true; } return false; }
