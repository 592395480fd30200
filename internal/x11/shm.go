package x11

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xproto"
	"golang.org/x/sys/unix"
)

// shmBuf is a System V shared memory segment the X server writes
// screenshots into (MIT-SHM), which saves copying the image through the
// socket.
type shmBuf struct {
	seg  shm.Seg
	data []byte
}

// enableSHM sets up MIT-SHM capture; on any failure captures fall back
// to GetImage.
func (c *Conn) enableSHM() error {
	err := initExt(c.x, "MIT-SHM")
	if err != nil {
		return fmt.Errorf("no MIT-SHM extension: %w", err)
	}
	size := c.w * c.h * 4
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, size, unix.IPC_CREAT|0o600)
	if err != nil {
		return fmt.Errorf("shmget: %w", err)
	}
	data, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		return fmt.Errorf("shmat: %w", err)
	}
	seg, err := shm.NewSegId(c.x)
	if err == nil {
		err = shm.AttachChecked(c.x, seg, uint32(id), false).Check()
	}
	// Marked for removal now: it goes when both sides detach or exit.
	unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	if err != nil {
		unix.SysvShmDetach(data)
		return fmt.Errorf("attach the segment to the X server: %w", err)
	}
	c.shm = &shmBuf{seg: seg, data: data}
	return nil
}

func (c *Conn) closeSHM() {
	if c.shm != nil {
		shm.Detach(c.x, c.shm.seg)
		unix.SysvShmDetach(c.shm.data)
		c.shm = nil
	}
}

// captureSHM reads the screen through the shared segment.
func (c *Conn) captureSHM(pix []byte, stride int) error {
	_, err := shm.GetImage(c.x, xproto.Drawable(c.root), 0, 0, uint16(c.w), uint16(c.h), 0xffffffff,
		xproto.ImageFormatZPixmap, c.shm.seg, 0).Reply()
	if err != nil {
		return fmt.Errorf("read the screen: %w", err)
	}
	swizzle(pix, stride, c.shm.data, c.w, c.h)
	return nil
}

// swizzle converts BGRX rows to RGBA in parallel bands.
func swizzle(dst []byte, stride int, src []byte, w, h int) {
	n := min(runtime.GOMAXPROCS(0), h)
	var wg sync.WaitGroup
	for i := range n {
		y0, y1 := h*i/n, h*(i+1)/n
		wg.Add(1)
		go func() {
			defer wg.Done()
			for y := y0; y < y1; y++ {
				s := src[y*w*4 : (y+1)*w*4]
				d := dst[y*stride : y*stride+w*4]
				for j := 0; j < len(s); j += 4 {
					d[j], d[j+1], d[j+2], d[j+3] = s[j+2], s[j+1], s[j], 0xff
				}
			}
		}()
	}
	wg.Wait()
}
