// placeholder: being written (see ARCHITECTURE.md)
