"""Packaging for whilelab, driven by `settings.ini` (the nbdev convention).

Deliberately free of `pkg_resources`, which current setuptools no longer ships."""
from configparser import ConfigParser
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
c = cfg['DEFAULT']

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License')}
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable']
min_python = c['min_python']
py_versions = [f'3.{i}' for i in range(int(min_python.split('.')[1]), 14)]
lic = licenses[c['license']]

setuptools.setup(
    name=c['lib_name'], version=c['version'], description=c['description'],
    author=c['author'], author_email=c['author_email'], license=lic[0],
    classifiers=[f'Development Status :: {statuses[int(c["status"])]}', f'Intended Audience :: {c["audience"]}',
                 f'License :: {lic[1]}', 'Natural Language :: English']
                + [f'Programming Language :: Python :: {v}' for v in py_versions],
    url=c['git_url'], packages=setuptools.find_packages(include=['whilelab', 'whilelab.*']),
    include_package_data=True, install_requires=c['requirements'].split(),
    # every `<extra>_requirements` line of settings.ini is an extra: whilelab[ray], whilelab[mcp], ...
    extras_require={k[:-len('_requirements')]: c[k].split() for k in c if k.endswith('_requirements')},
    python_requires=f'>={min_python}', long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown', zip_safe=False,
    entry_points={'console_scripts': c['console_scripts'].split(), 'nbdev': [f'{c["lib_path"]}={c["lib_path"]}._modidx:d']},
    keywords=c['keywords'])
