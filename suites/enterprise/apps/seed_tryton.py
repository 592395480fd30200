#!/usr/bin/python3
"""seed_tryton.py CONF DB: deterministic sales data for the pristine Tryton database.

Run with Debian's /usr/bin/python3 (proteus + trytond modules). Fixed lists and a fixed random
seed: running it twice on a fresh database gives the same rows (only audit timestamps such as
create_date differ). Creates: company + fiscal year + chart of accounts, 8 sales reps (users +
employees), 200 parties (120 companies, 80 people) with addresses/emails/phones, 40 products,
150 leads/opportunities in all states, 60 sales (quotations, confirmed, cancelled ...).
"""
import datetime
import random
import sys
import warnings
from decimal import Decimal

warnings.filterwarnings('ignore', category=DeprecationWarning)  # passlib "crypt" notice

from proteus import Model, Wizard, config as pconfig

CONF, DB = sys.argv[1], sys.argv[2]
cfg = pconfig.set_trytond(DB, config_file=CONF)



# Helpers modelled on trytond's tests/tools.py (not imported: importing trytond.tests sets
# Pool.test = True, which changes server behaviour).
def get_currency(code):
    Currency = Model.get('currency.currency')
    Rate = Model.get('currency.currency.rate')
    cur = Currency(name='U.S. Dollar', symbol='$', code=code, rounding=Decimal('0.01'))
    cur.save()
    Rate(date=datetime.date(2000, 1, 1), rate=Decimal(1), currency=cur).save()
    return cur


def create_company(party, currency):
    w = Wizard('company.company.config')
    w.execute('company')
    w.form.party = party
    w.form.currency = currency
    w.execute('add')
    cfg._context = Model.get('res.user').get_preferences(True, {})


def get_company():
    company, = Model.get('company.company').find()
    return company


def create_fiscalyear(company, today):
    FiscalYear = Model.get('account.fiscalyear')
    Sequence = Model.get('ir.sequence')
    SequenceStrict = Model.get('ir.sequence.strict')
    SequenceType = Model.get('ir.sequence.type')
    fy = FiscalYear(name=str(today.year), company=company,
                    start_date=datetime.date(today.year, 1, 1),
                    end_date=datetime.date(today.year, 12, 31))
    st, = SequenceType.find([('name', '=', 'Account Move')], limit=1)
    seq = Sequence(name=str(today.year), sequence_type=st, company=company)
    seq.save()
    fy.post_move_sequence = seq
    st, = SequenceType.find([('name', '=', 'Invoice')], limit=1)
    inv = SequenceStrict(name=str(today.year), sequence_type=st, company=company)
    inv.save()
    s, = fy.invoice_sequences
    s.out_invoice_sequence = s.in_invoice_sequence = inv
    s.out_credit_note_sequence = s.in_credit_note_sequence = inv
    return fy


def get_accounts(company):
    Account = Model.get('account.account')
    acc = {}
    for kind in ['receivable', 'payable', 'revenue', 'expense']:
        acc[kind], = Account.find([('type.%s' % kind, '=', True),
                                   ('company', '=', company.id)], limit=1)
    return acc


def create_chart(company):
    Template = Model.get('account.account.template')
    ModelData = Model.get('ir.model.data')
    data, = ModelData.find([('module', '=', 'account'),
                            ('fs_id', '=', 'account_template_root_en')], limit=1)
    w = Wizard('account.create_chart')
    w.execute('account')
    w.form.account_template = Template(data.db_id)
    w.form.company = company
    w.execute('create_account')
    acc = get_accounts(company)
    w.form.account_receivable = acc['receivable']
    w.form.account_payable = acc['payable']
    w.execute('create_properties')


def set_fiscalyear_invoice_sequences(fy):
    return fy


def create_payment_term():
    PaymentTerm = Model.get('account.invoice.payment_term')
    pt = PaymentTerm(name='Net 30')
    line = pt.lines.new(type='remainder')
    line.relativedeltas.new(days=30)
    return pt


R = random.Random(20260101)
TODAY = datetime.date(2026, 1, 15)   # fixed "today" for generated business dates

FIRST = ["James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda", "David",
         "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas",
         "Sarah", "Charles", "Karen", "Daniel", "Nancy", "Matthew", "Lisa", "Anthony", "Betty",
         "Mark", "Sandra", "Paul", "Ashley", "Steven", "Emily", "Kevin", "Donna", "Brian", "Michelle",
         "George", "Carol", "Edward", "Amanda", "Ronald", "Melissa", "Timothy", "Deborah", "Jason",
         "Stephanie", "Jeffrey", "Rebecca", "Ryan", "Laura"]
LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez",
        "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor",
        "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez",
        "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King", "Wright",
        "Scott", "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Baker", "Hall",
        "Rivera", "Campbell", "Mitchell", "Carter", "Roberts"]
CO_A = ["Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Wonka", "Tyrell", "Cyberdyne",
        "Soylent", "Hooli", "Vandelay", "Pied Piper", "Gringotts", "Oscorp", "Aperture", "Massive",
        "Blue Sun", "Nakatomi", "Sterling", "Dunder", "Prestige", "Monarch", "Bluth", "Kramerica",
        "Black Mesa", "Virtucon", "Zorin", "Gekko", "Duff"]
CO_B = ["Industries", "Logistics", "Foods", "Systems", "Holdings", "Labs", "Partners", "Retail",
        "Manufacturing", "Consulting", "Energy", "Health", "Media", "Robotics", "Capital", "Supply"]
CO_SUFFIX = ["Inc.", "LLC", "Ltd.", "GmbH", "Corp.", "SA"]
STREETS = ["Main St", "Oak Ave", "Maple Dr", "Cedar Ln", "Pine St", "Elm St", "Lake Rd",
           "Hill St", "Park Ave", "River Rd", "Sunset Blvd", "Market St", "Church St", "High St"]
CITIES = [("US", "New York", "100"), ("US", "Chicago", "606"), ("US", "Austin", "787"),
          ("US", "Seattle", "981"), ("US", "Boston", "021"), ("CA", "Toronto", "M5V"),
          ("CA", "Vancouver", "V6B"), ("GB", "London", "EC1"), ("GB", "Manchester", "M1 "),
          ("DE", "Berlin", "101"), ("DE", "Munich", "803"), ("FR", "Paris", "750"),
          ("FR", "Lyon", "690")]
COUNTRIES = {"US": "United States", "CA": "Canada", "GB": "United Kingdom", "DE": "Germany",
             "FR": "France"}
# (category, name, list price, type, unit name)
PRODUCTS = [
    ("Hardware", "Laptop Pro 14", 1899, "goods"), ("Hardware", "Laptop Air 13", 1299, "goods"),
    ("Hardware", "Desktop Tower X", 1499, "goods"), ("Hardware", "Monitor 27in 4K", 429, "goods"),
    ("Hardware", "Monitor 32in Curved", 589, "goods"), ("Hardware", "Docking Station", 249, "goods"),
    ("Hardware", "Wireless Keyboard", 79, "goods"), ("Hardware", "Ergonomic Mouse", 59, "goods"),
    ("Hardware", "Rack Server R740", 7400, "goods"), ("Hardware", "NAS Storage 48TB", 5200, "goods"),
    ("Hardware", "Network Switch 48p", 2300, "goods"), ("Hardware", "Wi-Fi Access Point", 380, "goods"),
    ("Hardware", "IP Desk Phone", 189, "goods"), ("Hardware", "Conference Camera", 899, "goods"),
    ("Software", "CRM Cloud - Standard (annual seat)", 600, "service"),
    ("Software", "CRM Cloud - Enterprise (annual seat)", 1500, "service"),
    ("Software", "Analytics Suite (annual seat)", 900, "service"),
    ("Software", "Helpdesk Pro (annual seat)", 480, "service"),
    ("Software", "Security Endpoint (annual device)", 65, "service"),
    ("Software", "Backup Cloud 1TB (annual)", 240, "service"),
    ("Software", "Office Suite (annual seat)", 150, "service"),
    ("Software", "Database Enterprise License", 12000, "service"),
    ("Software", "ERP Module Pack", 8500, "service"), ("Software", "API Gateway License", 4200, "service"),
    ("Services", "Onboarding Workshop (day)", 1800, "service"),
    ("Services", "Data Migration Package", 6500, "service"),
    ("Services", "Custom Integration (hour)", 180, "service"),
    ("Services", "Solution Architecture (day)", 2100, "service"),
    ("Services", "End-User Training (day)", 1200, "service"),
    ("Services", "On-site Installation", 950, "service"),
    ("Services", "Security Audit", 7800, "service"), ("Services", "Project Management (day)", 1400, "service"),
    ("Support", "Support Basic (annual)", 1200, "service"),
    ("Support", "Support Premium (annual)", 4800, "service"),
    ("Support", "Support 24x7 (annual)", 9600, "service"),
    ("Support", "Extended Warranty 3y", 299, "service"),
    ("Support", "Hardware Repair Visit", 350, "service"),
    ("Support", "Remote Health Check", 750, "service"),
    ("Support", "Dedicated TAM (month)", 3500, "service"),
    ("Support", "Spare Parts Kit", 420, "goods"),
]
REPS = [("Alice", "Morgan"), ("Bruno", "Keller"), ("Chloe", "Dubois"), ("Dev", "Patel"),
        ("Elena", "Rossi"), ("Felix", "Wagner"), ("Grace", "Okafor"), ("Hiro", "Tanaka")]

Party = Model.get('party.party')
Country = Model.get('country.country')
User = Model.get('res.user')
Group = Model.get('res.group')
Employee = Model.get('company.employee')

# --- first-login wizard: mark the "Module Configuration" items done -----------------------------
Item = Model.get('ir.module.config_wizard.item')
for item in Item.find([('state', '!=', 'done')]):
    item.state = 'done'
    item.save()

# --- company, accounting ------------------------------------------------------------------------
countries = {}
for code, name in COUNTRIES.items():
    c = Country(name=name, code=code)
    c.save()
    countries[code] = c
usd = get_currency('USD')
cparty = Party(name='Proctor Trading Inc.')
addr = cparty.addresses[0]
addr.street, addr.postal_code, addr.city, addr.country = '1 Harness Way', '94105', 'San Francisco', countries['US']
cparty.save()
create_company(cparty, usd)
company = get_company()
fy = set_fiscalyear_invoice_sequences(create_fiscalyear(company, today=TODAY))
fy.click('create_period')
create_chart(company)
accounts = get_accounts(company)
payment_term = create_payment_term()
payment_term.name = 'Net 30'
payment_term.save()
admin, = User.find([('login', '=', 'admin')])
admin.name = 'Administrator'
admin.email = 'admin@proctor.example'
admin.save()

# --- sales reps: employees + users (login first.last, password proctor-sales) -------------------
groups = Group.find([('name', 'in', ['Sales', 'Sale Opportunity', 'Party Administration',
                                     'Product Administration'])])
employees = []
for first, last in REPS:
    p = Party(name='%s %s' % (first, last))
    p.contact_mechanisms.new(type='email', value='%s.%s@proctor.example' % (first.lower(), last.lower()))
    p.save()
    emp = Employee(party=p, company=company, start_date=datetime.date(2024, 1, 1))
    emp.save()
    employees.append(emp)
    u = User(name=p.name, login='%s.%s' % (first.lower(), last.lower()), password='proctor-sales',
             email='%s.%s@proctor.example' % (first.lower(), last.lower()))
    u.companies.append(Model.get('company.company')(company.id))
    u.company = Model.get('company.company')(company.id)
    u.employees.append(emp)
    u.employee = emp
    for g in groups:
        u.groups.append(Group(g.id))
    u.save()
# the admin is employee #1 too, so buttons that record "by employee" work for admin
admin.reload()
admin.employees.append(Employee(employees[0].id))
admin.employee = Employee(employees[0].id)
admin.save()


def address(p):
    cc, city, zp = R.choice(CITIES)
    a = p.addresses[0]
    a.street = '%d %s' % (R.randint(1, 9999), R.choice(STREETS))
    a.postal_code = '%s%02d' % (zp, R.randint(1, 99)) if cc != 'GB' else '%s %dAB' % (zp.strip(), R.randint(1, 9))
    a.city = city
    a.country = countries[cc]


# --- parties: 120 companies + 80 people ---------------------------------------------------------
companies, people = [], []
used = set()
while len(companies) < 120:
    name = '%s %s %s' % (R.choice(CO_A), R.choice(CO_B), R.choice(CO_SUFFIX))
    if name in used:
        continue
    used.add(name)
    p = Party(name=name)
    address(p)
    dom = name.split()[0].lower().replace(' ', '') + R.choice(['.com', '.io', '.net', '.co'])
    p.contact_mechanisms.new(type='email', value='info@%s' % dom)
    p.contact_mechanisms.new(type='phone', value='+1-555-%04d' % R.randint(0, 9999))
    p.contact_mechanisms.new(type='website', value='https://www.%s' % dom)
    companies.append(p)
Party.save(companies)
while len(people) < 80:
    first, last = R.choice(FIRST), R.choice(LAST)
    name = '%s %s' % (first, last)
    if name in used:
        continue
    used.add(name)
    p = Party(name=name)
    address(p)
    emp_of = R.choice(companies)
    dom = emp_of.name.split()[0].lower() + '.example'
    p.contact_mechanisms.new(type='email', value='%s.%s@%s' % (first.lower(), last.lower(), dom))
    p.contact_mechanisms.new(type='mobile', value='+1-555-%04d' % R.randint(0, 9999))
    people.append(p)
Party.save(people)
customers = companies + people

# --- products -----------------------------------------------------------------------------------
Category = Model.get('product.category')
Template = Model.get('product.template')
Uom = Model.get('product.uom')
unit, = Uom.find([('name', '=', 'Unit')])
cats = {}
for cname in ['Hardware', 'Software', 'Services', 'Support']:
    c = Category(name=cname, accounting=True, account_revenue=accounts['revenue'],
                 account_expense=accounts['expense'])
    c.save()
    cats[cname] = c
products = []
for i, (cname, name, price, ptype) in enumerate(PRODUCTS):
    t = Template(name=name, type=ptype, default_uom=unit, salable=True,
                 list_price=Decimal(price), account_category=cats[cname])
    t.categories.append(Category(cats[cname].id))
    t.products[0].code = 'P%03d' % (i + 1)
    t.save()
    products.append(t.products[0])

# --- leads & opportunities ----------------------------------------------------------------------
Opportunity = Model.get('sale.opportunity')
Sale = Model.get('sale.sale')
TOPICS = ["renewal", "expansion", "new office rollout", "pilot", "migration", "upgrade",
          "framework deal", "replacement", "Q%d purchase" % 1, "tender"]
# final state per opportunity (150): lead 40, opportunity 40, converted 25, won 20, lost 15, cancelled 10
plan = (['lead'] * 40 + ['opportunity'] * 40 + ['converted'] * 25 + ['won'] * 20
        + ['lost'] * 15 + ['cancelled'] * 10)
R.shuffle(plan)
opps = []
for n, final in enumerate(plan):
    party = R.choice(customers)
    start = TODAY - datetime.timedelta(days=R.randint(0, 360))
    o = Opportunity(company=company, start_date=start)
    prods = R.sample(products, R.randint(1, 3))
    o.description = '%s - %s %s' % (party.name, prods[0].template.name, R.choice(TOPICS))
    o.conversion_probability = R.choice([0.1, 0.2, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9])
    o.employee = Employee(R.choice(employees).id)
    o.end_date = start + datetime.timedelta(days=R.randint(30, 150))
    if final != 'lead' or R.random() < 0.7:      # some leads have no party yet
        o.party = party
        o.address = party.addresses[0]
        o.payment_term = payment_term
    amount = Decimal(0)
    for pr in prods:
        ln = o.lines.new()
        ln.product = pr
        ln.quantity = R.choice([1, 2, 3, 5, 10, 20, 25, 50])
        amount += Decimal(ln.quantity) * pr.template.list_price
    o.amount = amount
    o.comment = 'Source: %s. Next step: %s.' % (
        R.choice(['web form', 'trade show', 'referral', 'cold call', 'partner', 'webinar']),
        R.choice(['send proposal', 'schedule demo', 'call decision maker', 'negotiate price',
                  'technical validation']))
    o.save()
    opps.append((o, final))

sale_count = 0
for o, final in opps:
    if final == 'lead':
        continue
    if final == 'cancelled':
        o.click('cancel')
        continue
    if final == 'lost' and R.random() < 0.5:
        o.lost_reason = R.choice(['Price too high', 'Chose a competitor', 'No budget this year',
                                  'Project postponed'])
        o.save()
        o.click('lost')
        continue
    o.click('opportunity')
    if final == 'opportunity':
        continue
    if final == 'lost':
        o.lost_reason = 'Went silent after demo'
        o.save()
        o.click('lost')
        continue
    o.click('convert')                          # creates a draft sale (quotation)
    sale_count += 1
    sale, = Sale.find([('origin', '=', 'sale.opportunity,%s' % o.id)])
    sale.sale_date = o.start_date + datetime.timedelta(days=14)
    sale.save()
    if final == 'won':
        sale.click('quote')
        sale.click('confirm')                   # opportunity becomes "won"
    elif R.random() < 0.6:
        sale.click('quote')                     # quotation sent, still "converted"

# direct sales (not from an opportunity) until 60 sales in total
states = ['draft', 'quotation', 'confirmed', 'cancelled']
while sale_count < 60:
    party = R.choice(companies)
    s = Sale(party=party, payment_term=payment_term,
             sale_date=TODAY - datetime.timedelta(days=R.randint(0, 200)),
             description='Direct order %s' % party.name.split()[0])
    for pr in R.sample(products, R.randint(1, 4)):
        ln = s.lines.new()
        ln.product = pr
        ln.quantity = R.choice([1, 2, 4, 5, 10])
    s.save()
    st = states[sale_count % 4]
    if st in ('quotation', 'confirmed'):
        s.click('quote')
    if st == 'confirmed':
        s.click('confirm')
    if st == 'cancelled':
        s.click('cancel')
    sale_count += 1

# won/lost/cancel set end_date to the real today: put back deterministic dates
for o, final in opps:
    o.reload()
    if o.state in ('won', 'lost', 'cancelled'):
        o.end_date = o.start_date + datetime.timedelta(days=45)
        Opportunity.write([o.id], {'end_date': o.end_date}, cfg.context)

print('seeded: %d parties, %d products, %d opportunities, %d sales' % (
    len(Party.find([])), len(products), len(opps), len(Sale.find([]))))
