"""The Speed view (F6): KV-cached vs uncached decoding and GQA measured on this device."""
