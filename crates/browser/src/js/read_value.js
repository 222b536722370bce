function(){ return 'value' in this ? String(this.value) : (this.innerText || ''); }
