// Package atomicfile replaces a file whole, for the file stores (counters, route state,
// stored responses): a reader that takes no lock sees the old file or the new one, never a
// part of either, and a crash leaves one of them.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, readable as perm says. The data goes to a temporary file
// beside path (a rename is atomic only within one file system), reaches the disk (Sync)
// before the rename makes it the file, and the temporary file is removed if anything fails.
func Write(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	err = tmp.Chmod(perm)       // CreateTemp makes 0600
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}
