"""The app's modal screens: confirmations, downloads and the Hub id prompt."""
