document.readyState === 'complete'
