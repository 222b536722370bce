(text) => document.body !== null && document.body.innerText.includes(text)
