package phonetest

import (
	"database/sql"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // the Notes app's database
)

// The apps of the ProBench-style task set (testdata/android): Settings,
// Notes and Sushi Finder, each a few screens that taps move between and
// that keep their state where a check reads it (settings, files).
const (
	SettingsApp = "com.android.settings"
	NotesApp    = "org.proctor.notes"
	ShopApp     = "org.proctor.sushi"
)

// row is a full-width list row at index i below a top bar.
func row(i int, w int) image.Rectangle { return image.Rect(0, 300+i*200, w, 300+(i+1)*200) }

func label(text string, r image.Rectangle) *Node {
	return &Node{Class: "android.widget.TextView", Text: text, Box: r}
}

func button(text string, r image.Rectangle, tap func(*Phone)) *Node {
	return &Node{Class: "android.widget.Button", Text: text, Box: r, Clickable: true, Tap: tap}
}

func title(text string, w int) *Node { return label(text, image.Rect(40, 120, w-40, 260)) }

// InstallProBench installs the three apps on ph.
func InstallProBench(ph *Phone) {
	ph.Install(App{Package: SettingsApp, Start: settingsHome, Actions: []string{"android.settings.SETTINGS"},
		Activities: map[string]func(*Phone) *Screen{
			".Settings":                                settingsHome,
			".wifi.WifiSettings":                       settingsInternet,
			".display.DisplaySettings":                 settingsDisplay,
			".fuelgauge.PowerUsageSummary":             settingsBattery,
			".network.NetworkDashboardActivity":        settingsNetwork,
			".wifi.details.WifiNetworkDetailsActivity": settingsWifiDetails,
		}})
	ph.Install(App{Package: NotesApp, Start: notesList})
	ph.Install(App{Package: ShopApp, Start: shopList, Clear: func(ph *Phone) {
		delete(ph.Settings, "sushi/sort")
		delete(ph.Settings, "sushi/filter")
	}})
}

// switchRow is a row with a label and a switch bound to a setting.
func switchRow(ph *Phone, i int, text, key, on, off string, again func(*Phone) *Screen) []*Node {
	r := row(i, ph.W)
	checked := ph.Settings[key] == on
	sw := &Node{Class: "android.widget.Switch", ID: "android:id/switch_widget", Desc: text, Checkable: true, Checked: checked, Clickable: true,
		Box: image.Rect(ph.W-220, r.Min.Y+40, ph.W-40, r.Max.Y-40)}
	sw.Tap = func(ph *Phone) {
		if ph.Settings[key] == on {
			ph.Settings[key] = off
		} else {
			ph.Settings[key] = on
		}
		ph.Show(again(ph))
	}
	return []*Node{label(text, image.Rect(40, r.Min.Y+40, ph.W-260, r.Max.Y-40)), sw}
}

func settingsScreen(activity string, nodes ...*Node) *Screen {
	return &Screen{Package: SettingsApp, Activity: activity, Color: color.RGBA{248, 248, 252, 255}, Nodes: nodes}
}

func settingsHome(ph *Phone) *Screen {
	rows := []struct {
		text string
		next func(*Phone) *Screen
	}{{"Network & internet", settingsNetwork}, {"Display", settingsDisplay}, {"Battery", settingsBattery}, {"About phone", settingsAbout}}
	nodes := []*Node{title("Settings", ph.W)}
	for i, r := range rows {
		next := r.next
		nodes = append(nodes, &Node{Class: "android.widget.LinearLayout", Clickable: true, Box: row(i, ph.W),
			Tap: func(ph *Phone) { ph.Show(next(ph)) }, Children: []*Node{label(r.text, row(i, ph.W).Inset(40))}})
	}
	return settingsScreen(".Settings", nodes...)
}

func settingsNetwork(ph *Phone) *Screen {
	nodes := []*Node{title("Network & internet", ph.W),
		{Class: "android.widget.LinearLayout", Clickable: true, Box: row(0, ph.W), Tap: func(ph *Phone) { ph.Show(settingsInternet(ph)) },
			Children: []*Node{label("Internet", row(0, ph.W).Inset(40))}}}
	nodes = append(nodes, switchRow(ph, 1, "Airplane mode", "global/airplane_mode_on", "1", "0", settingsNetwork)...)
	return settingsScreen(".network.NetworkDashboardActivity", nodes...)
}

func settingsInternet(ph *Phone) *Screen {
	nodes := []*Node{title("Internet", ph.W)}
	nodes = append(nodes, switchRow(ph, 0, "Wi-Fi", "global/wifi_on", "1", "0", settingsInternet)...)
	if ph.Settings["global/wifi_on"] != "0" {
		nodes = append(nodes, &Node{Class: "android.widget.LinearLayout", Clickable: true, Box: row(1, ph.W),
			Tap:      func(ph *Phone) { ph.Show(settingsWifiDetails(ph)) },
			Children: []*Node{label("AndroidWifi", row(1, ph.W).Inset(40))}})
	}
	return settingsScreen(".wifi.WifiSettings", nodes...)
}

func settingsWifiDetails(ph *Phone) *Screen {
	return settingsScreen(".wifi.details.WifiNetworkDetailsActivity", title("Network details", ph.W),
		label("AndroidWifi", row(0, ph.W).Inset(40)), label("Signal strength Excellent", row(1, ph.W).Inset(40)),
		label("IP address 10.0.2.16", row(2, ph.W).Inset(40)))
}

func settingsDisplay(ph *Phone) *Screen {
	nodes := []*Node{title("Display", ph.W)}
	nodes = append(nodes, switchRow(ph, 0, "Dark theme", "secure/ui_night_mode", "2", "1", settingsDisplay)...)
	return settingsScreen(".display.DisplaySettings", nodes...)
}

func settingsBattery(ph *Phone) *Screen {
	return settingsScreen(".fuelgauge.PowerUsageSummary", title("Battery", ph.W), label(strconv.Itoa(ph.Battery)+" %", row(0, ph.W).Inset(40)),
		label("Battery Saver", row(1, ph.W).Inset(40)))
}

func settingsAbout(ph *Phone) *Screen {
	return settingsScreen(".deviceinfo.aboutphone.MyDeviceInfoFragment", title("About phone", ph.W),
		label("Device name", row(0, ph.W).Inset(40)), label(ph.Model, image.Rect(40, row(0, ph.W).Min.Y+120, ph.W-40, row(0, ph.W).Max.Y)),
		label("Android version 14", row(1, ph.W).Inset(40)))
}

// Notes keeps each note as /sdcard/Documents/Notes/TITLE.txt.
const NotesDir = "/sdcard/Documents/Notes"

func notesScreen(activity string, nodes ...*Node) *Screen {
	return &Screen{Package: NotesApp, Activity: activity, Color: color.RGBA{255, 250, 230, 255}, Nodes: nodes}
}

func notesList(ph *Phone) *Screen {
	add := &Node{Class: "android.widget.ImageButton", Desc: "New note", ID: "org.proctor.notes:id/fab", Clickable: true,
		Box: image.Rect(ph.W-260, ph.H-400, ph.W-60, ph.H-200), Tap: func(ph *Phone) { ph.Show(notesEditor(ph)) }}
	return notesScreen(".NoteListActivity", title("Notes", ph.W), label("No notes yet", row(0, ph.W).Inset(40)), add)
}

func notesEditor(ph *Phone) *Screen {
	titleBox := &Node{Class: "android.widget.EditText", ID: "org.proctor.notes:id/title", Desc: "Title", Box: row(0, ph.W).Inset(30)}
	body := &Node{Class: "android.widget.EditText", ID: "org.proctor.notes:id/body", Desc: "Note", Box: image.Rect(30, 530, ph.W-30, 1300)}
	save := button("Save", image.Rect(ph.W-300, 120, ph.W-40, 260), func(ph *Phone) {
		name := strings.TrimSpace(titleBox.Text)
		if name == "" || strings.ContainsAny(name, "/\x00") {
			return // the app refuses a note without a title
		}
		ph.SetFile(NotesDir+"/"+name+".txt", body.Text)
		if err := saveNote(ph, name, body.Text); err != nil {
			return
		}
		ph.Show(notesList(ph))
	})
	return notesScreen(".NoteEditorActivity", label("New note", image.Rect(40, 120, 600, 260)), save, titleBox, body)
}

// saveNote keeps a note in the app's database as well,
// /data/data/org.proctor.notes/databases/notes.db (table notes: title,
// body), where run-as reads it.
func saveNote(ph *Phone, title, body string) error {
	dir := filepath.Join(ph.AppData(NotesApp), "databases")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "notes.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS notes (title TEXT PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		return err
	}
	_, err = db.Exec(`INSERT INTO notes (title, body) VALUES (?, ?) ON CONFLICT(title) DO UPDATE SET body = excluded.body`, title, body)
	return err
}

// The restaurants Sushi Finder lists, with their ratings and prices.
type restaurant struct {
	Name, Kind string
	Rating     float64
	Price      int
}

var restaurants = []restaurant{
	{"Ramen Ichiban", "Ramen", 4.1, 12}, {"Sakura Sushi", "Sushi", 4.8, 30}, {"Tempura Tanaka", "Tempura", 4.5, 22},
	{"Umi Sushi Bar", "Sushi", 4.3, 18}, {"Yakitori Yoshi", "Yakitori", 3.9, 9},
}

func shopScreen(activity string, nodes ...*Node) *Screen {
	return &Screen{Package: ShopApp, Activity: activity, Color: color.RGBA{250, 240, 240, 255}, Nodes: nodes}
}

// shopList shows the restaurants, sorted by rating and filtered to a
// kind when the person chose so (kept in the phone's settings, as the
// app would keep its preferences).
func shopList(ph *Phone) *Screen {
	list := slices.Clone(restaurants)
	if ph.Settings["sushi/sort"] == "rating" {
		slices.SortStableFunc(list, func(a, b restaurant) int {
			switch {
			case a.Rating > b.Rating:
				return -1
			case a.Rating < b.Rating:
				return 1
			}
			return 0
		})
	}
	kind := ph.Settings["sushi/filter"]
	nodes := []*Node{title("Sushi Finder", ph.W),
		button("Sort", image.Rect(40, 260, 360, 300+60), func(ph *Phone) { ph.Show(shopSort(ph)) }),
		{Class: "android.widget.CompoundButton", Text: "Sushi", ID: "org.proctor.sushi:id/chip_sushi", Checkable: true, Checked: kind == "Sushi",
			Clickable: true, Box: image.Rect(400, 260, 700, 360), Tap: func(ph *Phone) {
				if ph.Settings["sushi/filter"] == "Sushi" {
					delete(ph.Settings, "sushi/filter")
				} else {
					ph.Settings["sushi/filter"] = "Sushi"
				}
				ph.Show(shopList(ph))
			}}}
	i := 0
	for _, r := range list {
		if kind != "" && r.Kind != kind {
			continue
		}
		name := r.Name
		nodes = append(nodes, &Node{Class: "android.widget.LinearLayout", Clickable: true, Box: row(i+1, ph.W),
			Tap: func(ph *Phone) { ph.Show(shopRestaurant(ph, name)) },
			Children: []*Node{label(r.Name, image.Rect(40, row(i+1, ph.W).Min.Y+20, ph.W-300, row(i+1, ph.W).Min.Y+110)),
				label("★ "+strconv.FormatFloat(r.Rating, 'f', 1, 64)+" · $"+strconv.Itoa(r.Price), image.Rect(40, row(i+1, ph.W).Min.Y+110, ph.W-300, row(i+1, ph.W).Max.Y-20))}})
		i++
	}
	return shopScreen(".RestaurantListActivity", nodes...)
}

func shopSort(ph *Phone) *Screen {
	choose := func(v string) func(*Phone) {
		return func(ph *Phone) { ph.Settings["sushi/sort"] = v; ph.Show(shopList(ph)) }
	}
	return shopScreen(".SortDialog", title("Sort by", ph.W),
		&Node{Class: "android.widget.RadioButton", Text: "Distance", Checkable: true, Checked: ph.Settings["sushi/sort"] != "rating", Clickable: true, Box: row(0, ph.W).Inset(30), Tap: choose("distance")},
		&Node{Class: "android.widget.RadioButton", Text: "By rating", Checkable: true, Checked: ph.Settings["sushi/sort"] == "rating", Clickable: true, Box: row(1, ph.W).Inset(30), Tap: choose("rating")})
}

func shopRestaurant(ph *Phone, name string) *Screen {
	return shopScreen(".RestaurantActivity", title(name, ph.W),
		button("Menu", row(1, ph.W).Inset(40), func(ph *Phone) { ph.Show(shopMenu(ph, name)) }),
		button("Directions", row(2, ph.W).Inset(40), func(*Phone) {}))
}

func shopMenu(ph *Phone, name string) *Screen {
	return shopScreen(".MenuActivity", title(name+" menu", ph.W), label("Nigiri set", row(0, ph.W).Inset(40)),
		label("Miso soup", row(1, ph.W).Inset(40)))
}
