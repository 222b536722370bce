function(){ return 'value' in this ? String(this.value).length > 0 : (this.textContent || '').length > 0; }
