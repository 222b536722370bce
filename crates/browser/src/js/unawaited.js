(v) => v instanceof Promise ? '[object Promise]' : v
