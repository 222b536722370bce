(selector) => document.querySelector(selector) !== null
