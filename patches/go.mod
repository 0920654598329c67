module patchkit.invalid/patches

go 1.26
