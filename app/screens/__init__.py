"""The app's screens: start, main, finish, and the modal dialogs they open."""
