package adb

import (
	"fmt"
	"strconv"
	"strings"
)

// maxDevices bounds the lines parseDevices accepts.
const maxDevices = 4096

// parseDevices parses the answer to host:devices-l (or host:devices):
// one device a line, "SERIAL STATE" then optional key:value fields, e.g.
//
//	emulator-5554          device product:sdk_gphone64 model:sdk_gphone64_x86_64 device:emu64x transport_id:1
//	127.0.0.1:5555         unauthorized transport_id:2
//
// A state may be several words ("no permissions (...)"); fields that are
// not key:value pairs after the state are taken as part of it.
func parseDevices(s string) ([]DeviceInfo, error) {
	var out []DeviceInfo
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(out) >= maxDevices {
			return nil, fmt.Errorf("%w: more than %d devices", ErrProtocol, maxDevices)
		}
		d, err := parseDeviceLine(line)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func parseDeviceLine(line string) (DeviceInfo, error) {
	var d DeviceInfo
	// The serial ends at the first run of blanks (adb pads it with spaces;
	// old servers used a tab).
	i := strings.IndexAny(line, " \t")
	if i <= 0 {
		return d, fmt.Errorf("%w: device line %q has no state", ErrProtocol, line)
	}
	d.Serial = line[:i]
	fields := strings.Fields(line[i:])
	if len(fields) == 0 {
		return d, fmt.Errorf("%w: device line %q has no state", ErrProtocol, line)
	}
	// The state runs until the first key:value field we know.
	var state []string
	j := 0
	for ; j < len(fields); j++ {
		if j > 0 && isDeviceField(fields[j]) {
			break
		}
		state = append(state, fields[j])
	}
	d.State = strings.Join(state, " ")
	for _, f := range fields[j:] {
		k, v, _ := strings.Cut(f, ":")
		switch k {
		case "usb":
			d.USB = v
		case "product":
			d.Product = v
		case "model":
			d.Model = v
		case "device":
			d.Device = v
		case "transport_id":
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id < 0 {
				return d, fmt.Errorf("%w: device line %q: bad transport_id", ErrProtocol, line)
			}
			d.TransportID = id
		}
	}
	return d, nil
}

func isDeviceField(f string) bool {
	k, _, ok := strings.Cut(f, ":")
	if !ok {
		return false
	}
	switch k {
	case "usb", "product", "model", "device", "transport_id", "features":
		return true
	}
	return false
}
